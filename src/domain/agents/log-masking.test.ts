import {describe, expect, it} from 'vitest'
import type {TunnelStream} from '../brokers/gateway.js'
import {MASK, maskingStream, maskPatterns, maskText, StreamMasker} from './log-masking.js'

const SECRET = 'sk-live-4f7a9c1e'

/** Feeds `text` to a masker in the given chunk sizes and returns everything it let out. */
function streamed(text: string, patterns: string[], sizes: number[]): string {
  const m = new StreamMasker(patterns)
  const bytes = Buffer.from(text)
  const out: Buffer[] = []
  let at = 0
  for (let i = 0; at < bytes.length; i++) {
    const n = sizes[i % sizes.length]
    out.push(m.push(bytes.subarray(at, at + n)))
    at += n
  }
  out.push(m.flush())
  return Buffer.concat(out).toString()
}

describe('maskText', () => {
  it('replaces every occurrence with a fixed-width mask', () => {
    expect(maskText(`key=${SECRET}\r\nagain ${SECRET}${SECRET}\r\n`, [SECRET])).toBe(`key=${MASK}\r\nagain ${MASK}${MASK}\r\n`)
  })

  it('leaves text without secrets, and text when there are no secrets, as is', () => {
    expect(maskText('plain output\r\n', [SECRET])).toBe('plain output\r\n')
    expect(maskText(`x ${SECRET}`, [])).toBe(`x ${SECRET}`)
  })

  it('masks the longer of two secrets that start at one place whole', () => {
    expect(maskText('abcdef abc', maskPatterns(['abc', 'abcdef']))).toBe(`${MASK} ${MASK}`)
  })

  it('masks multi-byte values', () => {
    expect(maskText('pw: pässwörd-☃ end', ['pässwörd-☃'])).toBe(`pw: ${MASK} end`)
  })
})

describe('maskPatterns', () => {
  it('takes each non-empty value, trimmed too, and a multi-line value as a terminal prints it and line by line', () => {
    const pem = '-----BEGIN KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcN\n-----END KEY-----\n'
    const p = maskPatterns(['', 'short', ' padded-token ', pem])
    expect(p).toContain('short')
    expect(p).toContain('padded-token')
    expect(p).toContain(pem.trim().replace(/\n/g, '\r\n'))
    expect(p).toContain('MIIBOgIBAAJBAKj34GkxFhD90vcN')
    expect(p).not.toContain('')
    expect(maskText(`$ cat key\r\n${pem.replace(/\n/g, '\r\n')}$ `, p)).toBe(`$ cat key\r\n${MASK}$ `)
  })
})

describe('StreamMasker', () => {
  const text = `before ${SECRET} middle ${SECRET}\r\nafter`
  const expected = `before ${MASK} middle ${MASK}\r\nafter`

  it('masks a secret split across chunks at every boundary and chunk size', () => {
    for (let size = 1; size <= text.length; size++) expect(streamed(text, [SECRET], [size]), `chunks of ${size}`).toBe(expected)
    expect(streamed(text, [SECRET], [3, 11, 1, 7])).toBe(expected)
  })

  it('holds back only what may start a secret, never more than its length less one byte', () => {
    const m = new StreamMasker([SECRET])
    expect(m.push(Buffer.from('prompt $ ')).toString()).toBe('prompt $ ')
    expect(m.push(Buffer.from('out sk-li')).toString()).toBe('out ')
    expect(m.push(Buffer.from('ve-4f7a9c1e!')).toString()).toBe(`${MASK}!`)
    // A prefix that turns out not to be the secret is let out with the next chunk.
    expect(m.push(Buffer.from('sk-l')).toString()).toBe('')
    expect(m.push(Buffer.from('ong')).toString()).toBe('sk-long')
    expect(m.push(Buffer.from(SECRET.slice(0, -1))).length).toBe(0)
    // The stream ends: what was held goes out (it is not the whole secret).
    expect(m.flush().toString()).toBe(SECRET.slice(0, -1))
  })

  it('a UTF-8 character split across chunks is held and masked whole', () => {
    expect(streamed('x pässwörd y', ['pässwörd'], [3])).toBe(`x ${MASK} y`)
  })
})

describe('maskingStream', () => {
  function fakeStream() {
    const data: Array<(c: Buffer) => void> = []
    const closes: Array<(e?: {code: string; message: string}) => void> = []
    const written: Buffer[] = []
    const s: TunnelStream = {
      onData: (l) => data.push(l),
      onClose: (l) => closes.push(l),
      write: (d) => written.push(d),
      resize: () => {},
      close: () => {},
    }
    return {s, written, send: (t: string) => data.forEach((l) => l(Buffer.from(t))), end: () => closes.forEach((l) => l())}
  }

  it('masks data across chunks and gives what was held back before the close', () => {
    const f = fakeStream()
    const masked = maskingStream(f.s, [SECRET])
    const seen: string[] = []
    masked.onData((c) => seen.push(c.toString()))
    masked.onClose(() => seen.push('<closed>'))
    f.send(`a ${SECRET.slice(0, 5)}`)
    f.send(`${SECRET.slice(5)} b sk-`)
    f.end()
    expect(seen.join('')).toBe(`a ${MASK} b sk-<closed>`)
    masked.write(Buffer.from('typed'))
    expect(f.written.map(String)).toEqual(['typed'])
  })

  it('is the stream itself when there is nothing to mask', () => {
    const f = fakeStream()
    expect(maskingStream(f.s, [])).toBe(f.s)
  })
})
