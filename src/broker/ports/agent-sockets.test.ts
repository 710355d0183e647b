import {createServer, type AddressInfo, type Server} from 'node:net'
import {describe, expect, it} from 'vitest'
import {agentSockets, stillListening} from './agent-sockets.js'

const listen = (port = 0) =>
  new Promise<Server>((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(port, '127.0.0.1', () => resolve(s))
  })
const close = (s: Server) => new Promise<void>((resolve) => s.close(() => resolve()))

/**
 * A reading of an agent on the host's network is renewed from the host's table alone
 * (port-requests.ts) only while the very socket its processes held still listens: real sockets
 * of this process, read from the real /proc.
 */
describe('stillListening: the listeners of a reading whose socket still listens', () => {
  it('keeps a listener while its socket listens; once closed, a new socket on the same port is not it', async () => {
    const first = await listen()
    const port = (first.address() as AddressInfo).port
    const held = agentSockets(process.pid, []).listeners.filter((l) => l.port === port)
    expect(held).toHaveLength(1)
    expect(stillListening(held)).toEqual(held)
    await close(first)
    expect(stillListening(held)).toEqual([])
    // Anyone's new server on that port: a new socket (inode), never taken for the one seen.
    const second = await listen(port)
    try {
      expect(stillListening(held)).toEqual([])
      const now = agentSockets(process.pid, []).listeners.filter((l) => l.port === port)
      expect(now).toHaveLength(1)
      expect(now[0].inode).not.toBe(held[0].inode)
    } finally {
      await close(second)
    }
  })
})
