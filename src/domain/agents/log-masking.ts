/**
 * Secret masking of the agent output the Hub serves (CONTRACT.md "Isolation"): every secret value
 * a harness was given is replaced by `********` in `GET .../logs`, the follow stream and the
 * archive kept when the agent stops. Fixed width, so the mask says nothing about the length.
 *
 * A safety net, not a boundary: a program that prints a secret transformed (reversed, encoded,
 * in pieces) is not caught. The boundary is that only the agent itself, its ancestors and the
 * people of its project read its output (attach-reach.ts).
 */
import type {TunnelStream} from '../brokers/gateway.js'

export const MASK = '********'
const MASK_BYTES = Buffer.from(MASK)
const EMPTY = Buffer.alloc(0)

// A line of a multi-line secret (a key file) masked on its own: long enough not to be a common
// line of output (`-----END ...` lines are longer still, and harmless to mask).
const MIN_LINE = 8

/** Environment names whose harness-config `env` value is taken for a secret although no need names it. */
export const SECRET_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY|CREDENTIAL/i

/**
 * What to look for, for these secret values: each value as given and trimmed; for a multi-line
 * value also its terminal form (a terminal prints LF as CRLF) and each long line alone.
 */
export function maskPatterns(values: Iterable<string>): string[] {
  const out = new Set<string>()
  for (const v of values) {
    if (typeof v !== 'string' || v === '') continue
    out.add(v)
    if (v.trim()) out.add(v.trim())
    if (!v.includes('\n')) continue
    out.add(v.replace(/\r?\n/g, '\r\n'))
    out.add(v.trim().replace(/\r?\n/g, '\r\n'))
    for (const line of v.split(/\r?\n/)) if (line.trim().length >= MIN_LINE) out.add(line.trim())
  }
  return [...out]
}

/**
 * A byte-level masker for output that arrives in chunks. A secret split across chunks is caught:
 * bytes that could be the start of a secret are held back until the next chunk decides (never
 * more than the longest secret less one byte); `flush` lets them go when the stream ends.
 */
export class StreamMasker {
  private pending: Buffer = EMPTY
  private readonly patterns: Buffer[]
  private readonly firsts: Set<number>

  constructor(patterns: readonly string[]) {
    // Longest first: where two secrets start at one place, the longer one is masked whole.
    this.patterns = patterns.map((p) => Buffer.from(p, 'utf8')).filter((b) => b.length > 0).sort((a, b) => b.length - a.length)
    this.firsts = new Set(this.patterns.map((b) => b[0]))
  }

  get active(): boolean {
    return this.patterns.length > 0
  }

  /** The masked bytes that can be sent now. */
  push(chunk: Buffer): Buffer {
    if (!this.active) return chunk
    const buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk
    const {out, rest} = this.scan(buf, false)
    this.pending = rest
    return out
  }

  /** Whatever was held back, masked: the stream ended, no secret can complete any more. */
  flush(): Buffer {
    if (!this.pending.length) return EMPTY
    const {out} = this.scan(this.pending, true)
    this.pending = EMPTY
    return out
  }

  private scan(buf: Buffer, final: boolean): {out: Buffer; rest: Buffer} {
    const parts: Buffer[] = []
    let start = 0
    let i = 0
    scanning: while (i < buf.length) {
      if (!this.firsts.has(buf[i])) {
        i++
        continue
      }
      const left = buf.length - i
      for (const p of this.patterns) {
        // The output so far ends inside what may be this secret: wait for the next chunk.
        if (!final && left < p.length && buf.compare(p, 0, left, i, buf.length) === 0) break scanning
      }
      const hit = this.patterns.find((p) => left >= p.length && buf.compare(p, 0, p.length, i, i + p.length) === 0)
      if (hit) {
        parts.push(buf.subarray(start, i), MASK_BYTES)
        i += hit.length
        start = i
      } else i++
    }
    parts.push(buf.subarray(start, i))
    // The held-back bytes are copied: the chunk they came from may be reused by its sender.
    return {out: Buffer.concat(parts), rest: i < buf.length ? Buffer.from(buf.subarray(i)) : EMPTY}
  }
}

/** `text` with every secret of `patterns` masked (output read whole: an archive, a snapshot). */
export function maskText(text: string, patterns: readonly string[]): string {
  if (!patterns.length || !text) return text
  const m = new StreamMasker(patterns)
  return Buffer.concat([m.push(Buffer.from(text, 'utf8')), m.flush()]).toString('utf8')
}

/**
 * The stream with its output masked. Data listeners see masked chunks; when the stream ends,
 * the bytes still held back are given to them before any close listener runs. Input (attach)
 * passes unchanged: masking is of what the Hub serves, not of what a person types.
 */
export function maskingStream(stream: TunnelStream, patterns: readonly string[]): TunnelStream {
  const masker = new StreamMasker(patterns)
  if (!masker.active) return stream
  const listeners: Array<(chunk: Buffer) => void> = []
  const emit = (b: Buffer) => {
    if (b.length) for (const l of listeners) l(b)
  }
  let hooked = false
  return {
    onData(l) {
      listeners.push(l)
      // Hooked with the first listener, as the stream itself delivers only to listeners it has.
      if (!hooked) {
        hooked = true
        stream.onData((chunk) => emit(masker.push(chunk)))
      }
    },
    onClose(l) {
      stream.onClose((error) => {
        emit(masker.flush())
        l(error)
      })
    },
    write: (d) => stream.write(d),
    resize: (c, r) => stream.resize(c, r),
    close: () => stream.close(),
  }
}
