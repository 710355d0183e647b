import {createServer, type Server} from 'node:http'
import {afterAll, describe, expect, it} from 'vitest'
import {createNetns, netnsSupport, type NetNs} from '../helpers/netns.js'

const support = netnsSupport()

// A process inside a namespace reaches the host namespace over its veth link only, and a cut
// link cuts it off: what the tests across hosts rely on.
describe.skipIf(!support.ok)(`test network namespaces${support.ok ? '' : ` (SKIPPED: ${support.reason})`}`, () => {
  let ns: NetNs | null = null
  let srv: Server | null = null
  afterAll(() => {
    ns?.dispose()
    srv?.close()
  })

  const fetchFromInside = (url: string) => ns!.runIn(process.execPath, ['-e', `fetch(${JSON.stringify(url)}, {signal: AbortSignal.timeout(3000)}).then(async (r) => console.log(r.status, await r.text()), (e) => { console.log('failed', e.cause?.code ?? e.message); process.exit(1) })`])

  it('reaches a host listener over the veth link, and not once the link is down; dispose removes the namespace', async () => {
    srv = createServer((_req, res) => res.end('host'))
    await new Promise<void>((r) => srv!.listen(0, '0.0.0.0', r))
    const port = (srv.address() as {port: number}).port
    ns = createNetns()
    expect(ns.name).toMatch(/^svcns-\d+-\d+$/)
    const ok = fetchFromInside(`http://${ns.hostIp}:${port}/`)
    expect((await ok).stdout.trim()).toBe('200 host')
    // The host's loopback is not the namespace's: 127.0.0.1 inside has no listener.
    expect((await fetchFromInside(`http://127.0.0.1:${port}/`)).code).not.toBe(0)
    ns.setLink(false)
    expect((await fetchFromInside(`http://${ns.hostIp}:${port}/`)).code).not.toBe(0)
    ns.setLink(true)
    const name = ns.name
    ns.dispose()
    ns = null
    const {spawnSync} = await import('node:child_process')
    expect(spawnSync('ip', ['netns', 'list'], {encoding: 'utf8'}).stdout).not.toContain(name)
  })
})
