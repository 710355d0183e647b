import {createServer, connect} from 'node:net'
import {describe, expect, it} from 'vitest'
import {findOwner, loopbackPeerUid} from './peer-owner.js'

const TABLE = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:2652 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 7300 1
   1: 0100007F:C3A8 0100007F:2652 01 00000000:00000000 00:00000000 00000000  1000        0 9832 1
   2: 0100007F:2652 0100007F:C3A8 01 00000000:00000000 00:00000000 00000000     0        0 9833 1
`

describe('loopback peer owner', () => {
  it("finds the client socket's owner by its local and remote ports", () => {
    // Client port 0xC3A8 = 50088 talking to the server on 0x2652 = 9810.
    expect(findOwner(TABLE, 50088, 9810)).toBe(1000)
    // The server's own end (local 9810, remote 50088) is not the client.
    expect(findOwner(TABLE, 9810, 50088)).toBe(0)
    expect(findOwner(TABLE, 50089, 9810)).toBeNull()
  })

  it('reads a real connection of this process from the kernel tables', async () => {
    const server = createServer()
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const port = (server.address() as {port: number}).port
    const accepted = new Promise<import('node:net').Socket>((r) => server.once('connection', r))
    const client = connect(port, '127.0.0.1')
    const peer = await accepted
    try {
      const uid = await loopbackPeerUid(peer.remotePort!, peer.localPort!)
      // On Linux the kernel names this very process's user; elsewhere there is no table.
      expect(uid).toBe(process.platform === 'linux' ? process.getuid!() : null)
    } finally {
      client.destroy()
      server.close()
    }
  })
})
