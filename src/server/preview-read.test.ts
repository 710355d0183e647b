import net from 'node:net'
import type {AddressInfo} from 'node:net'
import {PassThrough} from 'node:stream'
import {afterEach, describe, expect, it} from 'vitest'
import {readIntoBuffer} from './preview-read.js'

/** Polls `fn` until it returns true; fails after `ms`. */
async function waitFor(fn: () => boolean, ms = 10_000) {
  const deadline = Date.now() + ms
  while (!fn()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 10))
  }
}

const servers: net.Server[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

/** A socket connected to a server that writes `data` once the client's first byte arrives, then ends. */
async function connectTo(data: Buffer): Promise<net.Socket> {
  const server = net.createServer((s) => s.once('data', () => s.end(data)))
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1')
  await new Promise((r) => socket.once('connect', r))
  return socket
}

const pattern = (n: number) => Buffer.from(Array.from({length: n}, (_, i) => (i * 7) % 256))

describe('readIntoBuffer: a socket read into one reused buffer', () => {
  it('hands on every read as a view of the one buffer, and the end as before', async () => {
    const data = pattern(3 * 1024 * 1024)
    const socket = await connectTo(data)
    const buffer = Buffer.allocUnsafeSlow(256 * 1024)
    const copies: Buffer[] = []
    let views = 0
    let ended = false
    expect(
      readIntoBuffer(socket, buffer, (chunk) => {
        if (chunk.buffer === buffer.buffer && chunk.byteOffset === buffer.byteOffset) views++
        copies.push(Buffer.from(chunk))
        return true
      }),
    ).toBe(true)
    socket.on('data', () => expect.fail('no data events in this mode'))
    socket.on('end', () => (ended = true))
    socket.write('go')
    await waitFor(() => ended)
    expect(views).toBe(copies.length)
    expect(Buffer.concat(copies).equals(data)).toBe(true)
    socket.destroy()
  })

  it('stops reading when told to, until resumed', async () => {
    const data = pattern(2 * 1024 * 1024)
    const socket = await connectTo(data)
    const copies: Buffer[] = []
    let stopped = false
    let ended = false
    readIntoBuffer(socket, Buffer.allocUnsafeSlow(64 * 1024), (chunk) => {
      copies.push(Buffer.from(chunk))
      // The first read stops reading: the socket's handle reads no more until resume().
      if (copies.length === 1) {
        setImmediate(() => {
          stopped = (socket as unknown as {_handle: {reading: boolean}})._handle.reading === false
          socket.resume()
        })
        return false
      }
      return true
    })
    socket.on('end', () => (ended = true))
    socket.write('go')
    await waitFor(() => ended)
    expect(stopped).toBe(true)
    expect(Buffer.concat(copies).equals(data)).toBe(true)
    socket.destroy()
  })

  it('leaves what it cannot switch as it is: a stream that is no socket, a socket holding bytes read', async () => {
    const pass = new PassThrough()
    expect(readIntoBuffer(pass, Buffer.alloc(16), () => true)).toBe(false)
    const socket = await connectTo(Buffer.from('early'))
    socket.pause()
    socket.write('go')
    await waitFor(() => socket.readableLength > 0)
    expect(readIntoBuffer(socket, Buffer.alloc(16), () => true)).toBe(false)
    expect(socket.read().toString()).toBe('early')
    socket.destroy()
  })
})
