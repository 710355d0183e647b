/**
 * Reading an agent server's HTTP/1.x answer off a byte stream for a preview (preview-proxy.ts):
 * its head parsed here, its body handed on as the very buffers that arrived, cut only where its
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
  const headers: Record<string, string | string[]> = {}
  const lengths = new Set<string>()
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]
    const colon = line.indexOf(':')
    const name = colon > 0 ? line.slice(0, colon).toLowerCase() : ''
    if (!TOKEN.test(name)) throw new MalformedAnswer('the agent\'s server sent a malformed header line')
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '')
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
 * with each piece of the body (subarrays of what arrived, never copies), and `feed` returns
 * true once the answer is complete (bytes after it are ignored: the connection is closed after
 * one answer). A close-delimited body is complete when the stream ends: call `end()`, which
 * returns false when the answer was cut short. Throws `MalformedAnswer`.
 */
export class AnswerReader {
  private pending: Buffer | null = null
  private framing: Framing | null = null
  private left = 0
  /** Where a chunked body is: a size line, data, the CRLF after data, or trailer lines. */
  private state: 'size' | 'data' | 'crlf' | 'trailer' = 'size'
  private complete = false

  constructor(
    private readonly noBody: boolean,
    private readonly head: (h: AnswerHead) => void,
    private readonly body: (chunk: Buffer) => void,
  ) {}

  feed(chunk: Buffer): boolean {
    if (this.complete) return true
    if (this.framing) return this.onBody(chunk)
    let buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk
    for (;;) {
      const end = buf.indexOf(CRLFCRLF)
      if (end < 0) {
        if (buf.length > maxHeaderSize) throw new MalformedAnswer(`the agent's server sent a head over ${maxHeaderSize} bytes`)
        this.pending = buf
        return false
      }
      if (end > maxHeaderSize) throw new MalformedAnswer(`the agent's server sent a head over ${maxHeaderSize} bytes`)
      const h = parseHead(buf.toString('latin1', 0, end), this.noBody)
      buf = buf.subarray(end + 4)
      if (h.status >= 200) {
        this.pending = null
        this.framing = h.framing
        if (h.framing.kind === 'length') this.left = h.framing.length
        this.head(h)
        if (h.framing.kind === 'none' || (h.framing.kind === 'length' && this.left === 0)) return (this.complete = true)
        return buf.length ? this.onBody(buf) : false
      }
      // An interim answer (100 Continue, 103 Early Hints): the final one follows.
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
  private chunked(input: Buffer): boolean {
    let buf = this.pending ? Buffer.concat([this.pending, input]) : input
    this.pending = null
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
        if (buf.length < 2) break
        if (buf[0] !== 0x0d || buf[1] !== 0x0a) throw new MalformedAnswer('the agent\'s server sent a chunk without its CRLF')
        buf = buf.subarray(2)
        this.state = 'size'
        continue
      }
      const eol = buf.indexOf('\r\n')
      if (eol < 0) break
      const line = buf.toString('latin1', 0, eol)
      buf = buf.subarray(eol + 2)
      if (this.state === 'trailer') {
        if (line === '') return (this.complete = true)
        continue
      }
      const m = /^([0-9a-fA-F]{1,12})[ \t]*(?:;[^\x00-\x08\x0a-\x1f\x7f]*)?$/.exec(line)
      if (!m) throw new MalformedAnswer('the agent\'s server sent a malformed chunk size')
      this.left = parseInt(m[1], 16)
      this.state = this.left === 0 ? 'trailer' : 'data'
    }
    // A size or trailer line split across reads waits for its end, within the head's limit.
    if (buf.length > maxHeaderSize) throw new MalformedAnswer('the agent\'s server sent an over-long chunk line')
    if (buf.length) this.pending = Buffer.from(buf)
    return false
  }
}
