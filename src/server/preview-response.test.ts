import {maxHeaderSize} from 'node:http'
import {describe, expect, it} from 'vitest'
import {AnswerReader, MalformedAnswer, parseHead, type AnswerHead} from './preview-response.js'

/** Feeds `parts` in order; what the reader made of them. */
function read(parts: Array<string | Buffer>, opts: {head?: boolean; end?: boolean} = {}) {
  let head: AnswerHead | null = null
  const body: Buffer[] = []
  const r = new AnswerReader(!!opts.head, (h) => (head = h), (c) => body.push(c))
  let done = false
  for (const p of parts) done = r.feed(Buffer.isBuffer(p) ? p : Buffer.from(p, 'latin1')) || done
  if (opts.end) done = r.end()
  return {head: head as AnswerHead | null, body: Buffer.concat(body).toString('latin1'), pieces: body, done}
}

/** Every way of cutting `text` in two, and byte by byte. */
function cuts(text: string): string[][] {
  const out = [[...text]]
  for (let i = 1; i < text.length; i++) out.push([text.slice(0, i), text.slice(i)])
  return out
}

describe('AnswerReader: an agent server\'s answer, its body passed on as it arrived', () => {
  it('a Content-Length body ends at its length, cut anywhere across reads; bytes after it are ignored', () => {
    const text = 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\n\r\nhelloEXTRA'
    for (const parts of cuts(text)) {
      const r = read(parts)
      expect(r.head).toMatchObject({status: 200, headers: {'content-length': '5', 'x-a': '1'}, framing: {kind: 'length', length: 5}})
      expect(r).toMatchObject({body: 'hello', done: true})
    }
  })

  it('hands on the buffers that arrived (subarrays), not copies', () => {
    const input = Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n0123456789')
    const r = read([input])
    expect(r.pieces).toHaveLength(1)
    expect(r.pieces[0].buffer).toBe(input.buffer)
  })

  it('keeps nothing fed but as a copy: the bytes may be read into the same buffer again', () => {
    // As preview-read.ts reads: every part lands in one buffer, overwritten by the next.
    const text = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n5\r\nhello\r\n0\r\n\r\n'
    for (const parts of cuts(text)) {
      const shared = Buffer.alloc(text.length)
      let head: AnswerHead | null = null
      let body = ''
      const r = new AnswerReader(false, (h) => (head = h), (c) => (body += c.toString('latin1')))
      let done = false
      for (const p of parts) {
        shared.fill('#')
        const n = shared.write(p, 'latin1')
        done = r.feed(shared.subarray(0, n)) || done
      }
      expect(head).toMatchObject({status: 200, headers: {'x-a': '1'}})
      expect({body, done}).toEqual({body: 'hello', done: true})
    }
  })

  it('decodes chunked framing cut anywhere, dropping extensions and trailers', () => {
    const text = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Trailer: t\r\n\r\nAFTER'
    for (const parts of cuts(text)) {
      const r = read(parts)
      expect(r.head?.framing).toEqual({kind: 'chunked'})
      expect(r).toMatchObject({body: 'helloabcdefghijklmnopqrstuvwxyz', done: true})
    }
  })

  it('Transfer-Encoding overrides Content-Length, which is dropped; a last coding other than chunked reads to the close', () => {
    const r = read(['HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n'])
    expect(r.head?.headers['content-length']).toBeUndefined()
    expect(r).toMatchObject({body: 'abc', done: true})
    const g = read(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nraw bytes'], {end: true})
    expect(g.head?.framing).toEqual({kind: 'close'})
    expect(g).toMatchObject({body: 'raw bytes', done: true})
  })

  it('a body without framing lasts until the stream ends', () => {
    const r = new AnswerReader(false, () => {}, () => {})
    expect(r.feed(Buffer.from('HTTP/1.0 200 OK\r\n\r\nsome'))).toBe(false)
    expect(r.feed(Buffer.from(' more'))).toBe(false)
    expect(r.end()).toBe(true)
  })

  it('a length or chunked body cut short is not complete when the stream ends', () => {
    expect(read(['HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'], {end: true}).done).toBe(false)
    expect(read(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab'], {end: true}).done).toBe(false)
    expect(read(['HTTP/1.1 200 OK\r\nContent-'], {end: true})).toMatchObject({head: null, done: false})
  })

  it('HEAD, 204 and 304 have no body whatever their Content-Length says', () => {
    expect(read(['HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n'], {head: true})).toMatchObject({done: true, body: '', head: {headers: {'content-length': '99'}}})
    expect(read(['HTTP/1.1 204 No Content\r\n\r\n'])).toMatchObject({done: true, head: {status: 204}})
    expect(read(['HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n'])).toMatchObject({done: true, body: ''})
    expect(read(['HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'])).toMatchObject({done: true, body: ''})
  })

  it('skips interim answers (100 Continue, 103 Early Hints) for the final one', () => {
    const r = read(['HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok'])
    expect(r.head?.status).toBe(201)
    expect(r.head?.headers.link).toBeUndefined()
    expect(r).toMatchObject({body: 'ok', done: true})
  })

  it('repeated fields as node:http has them: set-cookie a list, single ones the first, others joined', () => {
    const {headers} = parseHead('HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nContent-Type: text/html\r\nContent-Type: text/plain\r\nVary: a\r\nVary:  b \r\nX-Empty:', false)
    expect(headers).toEqual({'set-cookie': ['a=1', 'b=2'], 'content-type': 'text/html', vary: 'a, b', 'x-empty': ''})
  })

  it('refuses what could frame the browser\'s connection wrongly or smuggle a header', () => {
    const bad = [
      'HTTP/2 200 OK',
      'HTTP/1.1 200 OK\nX: y',
      'HTTP/1.1 099 Low',
      'HTTP/1.1 101 Switching Protocols',
      'http/1.1 200 OK',
      'HTTP/1.1 20 OK',
      'HTTP/1.1 200 OK\r\n folded: line',
      'HTTP/1.1 200 OK\r\nX: a\r\n continued',
      'HTTP/1.1 200 OK\r\nBad Name: v',
      'HTTP/1.1 200 OK\r\nName : v',
      'HTTP/1.1 200 OK\r\n: v',
      'HTTP/1.1 200 OK\r\nX: a\x00b',
      'HTTP/1.1 200 OK\r\nX: a\rb',
      'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6',
      'HTTP/1.1 200 OK\r\nContent-Length: -1',
      'HTTP/1.1 200 OK\r\nContent-Length: 5, 5',
      'HTTP/1.1 200 OK\r\nContent-Length: 0x10',
    ]
    for (const head of bad) expect(() => parseHead(head, false), head).toThrow(MalformedAnswer)
    expect(parseHead('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5', false).framing).toEqual({kind: 'length', length: 5})
  })

  it('refuses malformed chunks', () => {
    for (const body of ['zz\r\n', '-1\r\n', '0x5\r\n', '5\r\nhelloXY', '1234567890abc\r\n', '5\x00\r\n']) {
      expect(() => read([`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${body}`]), JSON.stringify(body)).toThrow(MalformedAnswer)
    }
  })

  it('refuses a head, or a chunk line, longer than node:http allows', () => {
    const long = `HTTP/1.1 200 OK\r\nX: ${'a'.repeat(maxHeaderSize)}`
    expect(() => read([long])).toThrow(MalformedAnswer)
    expect(() => read([`${long}\r\n\r\n`])).toThrow(MalformedAnswer)
    expect(() => read(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', `5;${'e'.repeat(maxHeaderSize)}`])).toThrow(MalformedAnswer)
  })

  it('interim answers share the final head\'s size limit: a flood of them is refused', () => {
    // Each under the limit alone; together over it (each had an allowance of its own).
    const interim = `HTTP/1.1 103 Early Hints\r\nX: a${' '.repeat(4000)}b\r\n\r\n`
    const flood = interim.repeat(Math.ceil(maxHeaderSize / interim.length) + 1)
    expect(() => read([`${flood}HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n`])).toThrow(MalformedAnswer)
    expect(read([`${interim}${interim}HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n`])).toMatchObject({head: {status: 200}, done: true})
  })

  it('values keep inner spaces and lose outer ones however long the run; names like constructor are plain headers', () => {
    const r = read([`HTTP/1.1 200 OK\r\nX: \t a${' '.repeat(8000)}b \t\r\nconstructor: c\r\n__proto__: p\r\ncontent-length: 0\r\n\r\n`])
    expect(r.head!.headers.x).toBe(`a${' '.repeat(8000)}b`)
    expect(r.head!.headers.constructor).toBe('c')
    expect(Object.getOwnPropertyDescriptor(r.head!.headers, '__proto__')?.value).toBe('p')
  })
})
