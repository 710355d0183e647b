import {createHash, randomBytes} from 'node:crypto'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {PassThrough, Readable} from 'node:stream'
import {afterAll, describe, expect, it} from 'vitest'
import {writeHashed} from './hash-writer.js'

const dir = mkdtempSync(join(tmpdir(), 'svc-hash-writer-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))
let n = 0
const fresh = () => join(dir, `f${++n}`)
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')

/** Pieces of odd sizes, some larger than the 1 MiB block, so blocks fill across chunk borders. */
function pieces(data: Buffer): Buffer[] {
  const out: Buffer[] = []
  const sizes = [1, 65_536, 1_500_000, 3, 999_999, 2_097_152]
  for (let off = 0, i = 0; off < data.length; i++) {
    const len = Math.min(sizes[i % sizes.length], data.length - off)
    out.push(data.subarray(off, off + len))
    off += len
  }
  return out
}

describe('writeHashed', () => {
  it('writes the bytes and returns their size and SHA-256, across block borders and with backpressure', async () => {
    const data = randomBytes(9 * 1024 * 1024 + 123)
    const file = fresh()
    const got = await writeHashed(Readable.from(pieces(data)), file)
    expect(got).toEqual({size: data.length, sha256: sha(data)})
    expect(readFileSync(file).equals(data)).toBe(true)
  })

  it('leaves the source chunks intact (they are copied, never handed over)', async () => {
    const chunk = Buffer.alloc(3 * 1024 * 1024, 7)
    await writeHashed(Readable.from([chunk]), fresh())
    expect(chunk.length).toBe(3 * 1024 * 1024)
    expect(chunk[chunk.length - 1]).toBe(7)
  })

  it('handles an empty body and several uploads at once', async () => {
    expect(await writeHashed(Readable.from([]), fresh())).toEqual({size: 0, sha256: sha(Buffer.alloc(0))})
    const bodies = Array.from({length: 6}, (_, i) => randomBytes(1024 * 1024 * (i + 1) + i))
    const got = await Promise.all(bodies.map((b) => writeHashed(Readable.from(pieces(b)), fresh())))
    expect(got).toEqual(bodies.map((b) => ({size: b.length, sha256: sha(b)})))
  })

  it('rejects when the body fails mid-stream, and the file can then be removed', async () => {
    const body = new PassThrough()
    const file = fresh()
    const p = writeHashed(body, file)
    body.write(Buffer.alloc(2 * 1024 * 1024, 1))
    setImmediate(() => body.destroy(new Error('client went away')))
    await expect(p).rejects.toThrow('client went away')
    rmSync(file, {force: true})
  })

  it('rejects when the signal aborts', async () => {
    const body = new PassThrough()
    const ac = new AbortController()
    const p = writeHashed(body, fresh(), {signal: ac.signal})
    body.write(Buffer.alloc(1024, 1))
    setImmediate(() => ac.abort(new Error('stop')))
    await expect(p).rejects.toThrow()
  })

  it('fails past the limit with its error and leaves the body undestroyed (an answer can follow)', async () => {
    const body = new PassThrough()
    const p = writeHashed(body, fresh(), {limit: {bytes: 3 * 1024 * 1024, error: () => new Error('too large')}})
    for (let i = 0; i < 4; i++) body.write(Buffer.alloc(1024 * 1024, i))
    await expect(p).rejects.toThrow('too large')
    expect(body.destroyed).toBe(false)
    const exact = Buffer.alloc(3 * 1024 * 1024, 9)
    expect(await writeHashed(Readable.from([exact]), fresh(), {limit: {bytes: exact.length, error: () => new Error('no')}})).toEqual({size: exact.length, sha256: sha(exact)})
  })

  it('never overwrites an existing file', async () => {
    const file = fresh()
    writeFileSync(file, 'keep me')
    await expect(writeHashed(Readable.from([Buffer.from('new')]), file)).rejects.toMatchObject({code: 'EEXIST'})
    expect(readFileSync(file, 'utf8')).toBe('keep me')
  })
})
