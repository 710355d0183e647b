/**
 * Reading an agent server's HTTP/1.x answer off a byte stream for a preview (preview-proxy.ts):
 * its head parsed here, its body handed on as views of the bytes that arrived, cut only where its
 * framing (Content-Length or chunked) says it ends.
 *
 * Why not node:http's client: its parser copies every body byte into a new buffer (llhttp's
 * on_body makes a Buffer::Copy), which with the garbage it leaves was half of the Hub's CPU
 * time on a 10 MiB preview download. The head is small and parsed once; the body is sliced.
 *
 * Strict where a lax reading could let an agent's server make the Hub frame the browser's
 * connection wrongly: CRLF line ends only, no obs-fold, header names as tokens, no control
 * characters in values, one Content-Length (duplicates must agree), Transfer-Encoding wins over
 * Content-Length (which is then dropped), and heads no larger than node's own limit. Anything
 * else is a `MalformedAnswer`, which the relay turns into 502 (or a cut connection once the
 * browser has the head).
 */
import {maxHeaderSize, type IncomingHttpHeaders} from 'node:http'

export class MalformedAnswer extends Error {}

/** How the body after the head ends. */
export type Framing = {kind: 'none'} | {kind: 'length'; length: number} | {kind: 'chunked'} | {kind: 'close'}

export interface AnswerHead {
  status: number
  /** Lowercase names; `set-cookie` a list, other repeated fields joined as node:http joins them. */
  headers: IncomingHttpHeaders
  framing: Framing
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
// Control characters but tab: a value is forwarded to the browser as it is.
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/
const STATUS_LINE = /^HTTP\/1\.[01] (\d{3})(?: [^\x00-\x08\x0a-\x1f\x7f]*)?$/
// node:http keeps the first of these when repeated (IncomingMessage#_addHeaderLine).
const SINGLE = new Set(['age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host', 'if-modified-since', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'proxy-authorization', 'referer', 'retry-after', 'server', 'user-agent'])
const CRLFCRLF = Buffer.from('\r\n\r\n')
const CRLF = Buffer.from('\r\n')

/**
 * Parses one head (without its final empty line). `noBody`: the request was HEAD. A 1xx other
 * than 101 is returned too (status < 200): the caller skips it and reads the next head.
 */
export function parseHead(text: string, noBody: boolean): AnswerHead {
  const lines = text.split('\r\n')
  const m = STATUS_LINE.exec(lines[0])
  if (!m) throw new MalformedAnswer('the agent\'s server did not answer with HTTP/1.x')
  const status = Number(m[1])
  if (status < 100 || status === 101) throw new MalformedAnswer(`the agent's server answered ${status}`)
  // No prototype: a header named `constructor` or `__proto__` is a header like any other.
  const headers: Record<string, string | string[]> = Object.create(null)
  const lengths = new Set<string>()
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]
    const colon = line.indexOf(':')
    const name = colon > 0 ? line.slice(0, colon).toLowerCase() : ''
    if (!TOKEN.test(name)) throw new MalformedAnswer('the agent\'s server sent a malformed header line')
    const value = trimOws(line, colon + 1)
    if (BAD_VALUE.test(value)) throw new MalformedAnswer(`the agent's server sent a control character in ${name}`)
    if (name === 'content-length') lengths.add(value)
    const had = headers[name]
    if (name === 'set-cookie') headers[name] = [...((had as string[] | undefined) ?? []), value]
    else if (had === undefined) headers[name] = value
    else if (!SINGLE.has(name)) headers[name] = `${had as string}${name === 'cookie' ? '; ' : ', '}${value}`
  }
  if (lengths.size > 1) throw new MalformedAnswer('the agent\'s server sent conflicting Content-Length fields')
  return {status, headers, framing: framingOf(status, headers, noBody)}
}

/** `line` from `from` without leading and trailing spaces and tabs (a loop: a regex backtracks on long runs). */
function trimOws(line: string, from: number): string {
  let start = from
  let end = line.length
  while (start < end && (line.charCodeAt(start) === 0x20 || line.charCodeAt(start) === 0x09)) start++
  while (end > start && (line.charCodeAt(end - 1) === 0x20 || line.charCodeAt(end - 1) === 0x09)) end--
  return line.slice(start, end)
}

/**
 * Bytes held until a delimiter arrives: the pieces kept as they came and joined once it is found,
 * and each arrival searched only where the delimiter could newly appear, so bytes that trickle in
 * one at a time cost linear time, not a copy and a scan of all held bytes per arrival.
 */
class Held {
  private pieces: Buffer[] = []
  length = 0

  /** Where `delim` starts in the held bytes followed by `chunk`; -1 when it is not there yet. */
  find(chunk: Buffer, delim: Buffer): number {
    const want = Math.min(delim.length - 1, this.length)
    const tail: Buffer[] = []
    for (let i = this.pieces.length - 1, n = 0; i >= 0 && n < want; i--) {
      const p = this.pieces[i]
      const take = Math.min(p.length, want - n)
      tail.unshift(p.subarray(p.length - take))
      n += take
    }
    const at = (tail.length ? Buffer.concat([...tail, chunk]) : chunk).indexOf(delim)
    return at < 0 ? -1 : this.length - want + at
  }

  /** Holds a copy of `chunk`: its buffer may be read into again, and a small piece of a large read should not keep all of it. */
  hold(chunk: Buffer): void {
    this.pieces.push(Buffer.from(chunk))
    this.length += chunk.length
  }

  /** The held bytes followed by `chunk`, and nothing held any more. */
  take(chunk: Buffer): Buffer {
    const all = this.length ? Buffer.concat([...this.pieces, chunk]) : chunk
    this.pieces = []
    this.length = 0
    return all
  }
}

function framingOf(status: number, headers: Record<string, string | string[]>, noBody: boolean): Framing {
  if (noBody || status < 200 || status === 204 || status === 304) return {kind: 'none'}
  const te = headers['transfer-encoding']
  if (typeof te === 'string') {
    // RFC 9112 6.3: Transfer-Encoding overrides Content-Length, which a proxy must not pass on.
    delete headers['content-length']
    return te.split(',').at(-1)!.trim().toLowerCase() === 'chunked' ? {kind: 'chunked'} : {kind: 'close'}
  }
  const cl = headers['content-length']
  if (typeof cl === 'string') {
    if (!/^\d{1,15}$/.test(cl)) throw new MalformedAnswer('the agent\'s server sent an invalid Content-Length')
    return {kind: 'length', length: Number(cl)}
  }
  return {kind: 'close'}
}

/**
 * Takes the answer's bytes as they arrive: `head` is called once with the final head, `body`
 * with each piece of the body (subarrays of what arrived, never copies: valid as long as the
 * chunk fed is; nothing fed is kept past `feed` but as a copy), and `feed` returns
 * true once the answer is complete (bytes after it are ignored: the connection is closed after
 * one answer). A close-delimited body is complete when the stream ends: call `end()`, which
 * returns false when the answer was cut short. Throws `MalformedAnswer`.
 */
export class AnswerReader {
  private readonly held = new Held()
  private framing: Framing | null = null
  private left = 0
  /** Where a chunked body is: a size line, data, the CRLF after data, or trailer lines. */
  private state: 'size' | 'data' | 'crlf' | 'trailer' = 'size'
  private complete = false
  /** Bytes of heads read so far, interim ones included: all of them share one head's limit. */
  private headBytes = 0

  constructor(
    private readonly noBody: boolean,
    private readonly head: (h: AnswerHead) => void,
    private readonly body: (chunk: Buffer) => void,
  ) {}

  feed(chunk: Buffer): boolean {
    if (this.complete) return true
    if (this.framing) return this.onBody(chunk)
    for (;;) {
      const end = this.held.find(chunk, CRLFCRLF)
      if (end < 0) {
        if (this.headBytes + this.held.length + chunk.length > maxHeaderSize) throw new MalformedAnswer(`the agent's server sent a head over ${maxHeaderSize} bytes`)
        // A copy: the caller may read its next bytes into the same buffer (preview-read.ts).
        this.held.hold(chunk)
        return false
      }
      this.headBytes += end + 4
      if (this.headBytes > maxHeaderSize) throw new MalformedAnswer(`the agent's server sent a head over ${maxHeaderSize} bytes`)
      const buf = this.held.take(chunk)
      const h = parseHead(buf.toString('latin1', 0, end), this.noBody)
      chunk = buf.subarray(end + 4)
      if (h.status >= 200) {
        this.framing = h.framing
        if (h.framing.kind === 'length') this.left = h.framing.length
        this.head(h)
        if (h.framing.kind === 'none' || (h.framing.kind === 'length' && this.left === 0)) return (this.complete = true)
        return chunk.length ? this.onBody(chunk) : false
      }
      // An interim answer (100 Continue, 103 Early Hints): the final one follows.
      if (!chunk.length) return false
    }
  }

  /** The stream ended: true when that completes the answer. */
  end(): boolean {
    if (!this.complete && this.framing?.kind === 'close') this.complete = true
    return this.complete
  }

  private onBody(chunk: Buffer): boolean {
    const f = this.framing!
    if (f.kind === 'close') {
      this.body(chunk)
      return false
    }
    if (f.kind === 'length') {
      const take = Math.min(this.left, chunk.length)
      this.body(take === chunk.length ? chunk : chunk.subarray(0, take))
      this.left -= take
      return (this.complete = this.left === 0)
    }
    return this.chunked(chunk)
  }

  /** Decodes chunked framing: the data goes on, sizes, extensions and trailers are dropped. */
  private chunked(buf: Buffer): boolean {
    while (buf.length) {
      if (this.state === 'data') {
        const take = Math.min(this.left, buf.length)
        this.body(buf.subarray(0, take))
        buf = buf.subarray(take)
        this.left -= take
        if (this.left === 0) this.state = 'crlf'
        continue
      }
      if (this.state === 'crlf') {
        // The CRLF after a chunk's data, possibly split across reads.
        const eol = this.held.find(buf, CRLF)
        if (eol < 0) {
          if (this.held.length + buf.length >= 2) throw new MalformedAnswer('the agent\'s server sent a chunk without its CRLF')
          this.held.hold(buf)
          return false
        }
        if (eol !== 0) throw new MalformedAnswer('the agent\'s server sent a chunk without its CRLF')
        buf = this.held.take(buf).subarray(2)
        this.state = 'size'
        continue
      }
      const eol = this.held.find(buf, CRLF)
      if (eol < 0) {
        // A size or trailer line split across reads waits for its end, within the head's limit.
        if (this.held.length + buf.length > maxHeaderSize) throw new MalformedAnswer('the agent\'s server sent an over-long chunk line')
        this.held.hold(buf)
        return false
      }
      const all = this.held.take(buf)
      const line = all.toString('latin1', 0, eol)
      buf = all.subarray(eol + 2)
      if (this.state === 'trailer') {
        if (line === '') return (this.complete = true)
        continue
      }
      const m = /^([0-9a-fA-F]{1,12})[ \t]*(?:;[^\x00-\x08\x0a-\x1f\x7f]*)?$/.exec(line)
      if (!m) throw new MalformedAnswer('the agent\'s server sent a malformed chunk size')
      this.left = parseInt(m[1], 16)
      this.state = this.left === 0 ? 'trailer' : 'data'
    }
    return false
  }
}
