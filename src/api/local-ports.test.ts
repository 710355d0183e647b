import {once} from 'node:events'
import net, {type AddressInfo} from 'node:net'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {localPortOpener, registerLocalPorts} from './local-ports.js'

async function waitFor(fn: () => boolean, ms = 10_000) {
  const deadline = Date.now() + ms
  while (!fn()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe('localPortOpener: the in-process broker\'s connections to ports, bounded in time', () => {
  let server: net.Server
  let port = 0
  const accepted: net.Socket[] = []

  beforeAll(async () => {
    server = net.createServer((s) => accepted.push(s))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    port = (server.address() as AddressInfo).port
  })
  afterAll(() => {
    for (const s of accepted) s.destroy()
    server?.close()
  })

  it('an open that takes too long is broker_timeout, and the connection made after it is closed', async () => {
    let release: () => void = () => {}
    const unregister = registerLocalPorts('slow', async () => {
      await new Promise<void>((r) => (release = r))
      const s = net.connect(port, '127.0.0.1')
      await once(s, 'connect')
      return s
    })
    try {
      await expect(localPortOpener('slow', 50)!('agent.port', {port})).rejects.toMatchObject({code: 'broker_timeout', status: 504})
      const before = accepted.length
      release()
      await waitFor(() => accepted.length > before)
      const late = accepted.at(-1)!
      await waitFor(() => late.readableEnded || late.destroyed)
    } finally {
      unregister()
    }
  })

  it('an open in time is the broker\'s own socket; a refusal keeps its code', async () => {
    const unregister = registerLocalPorts('quick', async (_method, params) => {
      if ((params as {port: number}).port !== port) throw Object.assign(new Error('the agent does not listen on port 1'), {code: 'not_found'})
      const s = net.connect(port, '127.0.0.1')
      await once(s, 'connect')
      return s
    })
    try {
      const s = await localPortOpener('quick', 5_000)!('agent.port', {port})
      expect(s).toBeInstanceOf(net.Socket)
      s.destroy()
      await expect(localPortOpener('quick', 5_000)!('agent.port', {port: 1})).rejects.toMatchObject({code: 'not_found'})
      expect(localPortOpener('nobody')).toBeUndefined()
    } finally {
      unregister()
    }
  })
})
