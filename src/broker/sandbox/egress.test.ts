import {existsSync, mkdtempSync, rmSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import net from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {closeEgress, egressRunning, forgetForTest, openEgress, proxyTarget, resumeEgress} from './egress.js'

/** Sends `data` over the Unix socket and returns all that comes back until the other end closes. */
function exchange(socket: string, data: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = net.connect(socket)
    let out = ''
    c.on('data', (d) => (out += d.toString()))
    c.on('end', () => resolve(out))
    c.on('error', reject)
    c.write(data)
  })
}

describe("the broker's side of an isolated network", () => {
  let root: string
  let web: Server
  let port: number

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'svc-egress-'))
    web = createServer((req, res) => res.end(`hello ${req.method} ${req.url}`))
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r))
    port = (web.address() as net.AddressInfo).port
  })
  afterAll(async () => {
    await new Promise((r) => web.close(r))
    rmSync(root, {recursive: true, force: true})
  })

  it('a loopback socket reaches its one destination; the proxy lets through only its list', async () => {
    const dir = join(root, 'a')
    await openEgress(dir, {
      loopback: [{address: '127.0.0.1', port, socket: join(dir, 'l0.sock')}],
      proxy: {address: '127.0.0.1', port: 3128, socket: join(dir, 'proxy.sock'), allow: [`127.0.0.1:${port}`]},
    })
    expect(await exchange(join(dir, 'l0.sock'), 'GET /x HTTP/1.0\r\n\r\n')).toContain('hello GET /x')
    // CONNECT to an allowed pair: a tunnel, then the request inside it.
    const tunnelled = await exchange(join(dir, 'proxy.sock'), `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: x\r\n\r\nGET /t HTTP/1.0\r\n\r\n`)
    expect(tunnelled).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200 OK/)
    expect(tunnelled).toContain('hello GET /t')
    // An absolute-form request to an allowed pair is forwarded.
    expect(await exchange(join(dir, 'proxy.sock'), `GET http://127.0.0.1:${port}/abs HTTP/1.0\r\n\r\n`)).toContain('hello GET http://127.0.0.1')
    // Anything else: 403 naming the setting; nothing is connected.
    const denied = await exchange(join(dir, 'proxy.sock'), 'CONNECT 127.0.0.1:5432 HTTP/1.1\r\n\r\n')
    expect(denied).toMatch(/^HTTP\/1\.1 403 Forbidden/)
    expect(denied).toContain('does not allow 127.0.0.1:5432')
    expect(await exchange(join(dir, 'proxy.sock'), `GET http://localhost:${port}/ HTTP/1.0\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403/)
    expect(await exchange(join(dir, 'proxy.sock'), 'hello\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/)

    await closeEgress(dir)
    expect(existsSync(dir)).toBe(false)
  })

  it('a plan kept on disk is served again by a process that does not serve it (a restarted broker)', async () => {
    const dir = join(root, 'b')
    await openEgress(dir, {loopback: [{address: '127.0.0.1', port, socket: join(dir, 'l0.sock')}]})
    // Simulate the restart: forget the servers (their socket files stay behind, as after a crash).
    await forgetForTest(dir)
    expect(egressRunning(dir)).toBe(false)
    await resumeEgress(dir)
    expect(egressRunning(dir)).toBe(true)
    expect(await exchange(join(dir, 'l0.sock'), 'GET /again HTTP/1.0\r\n\r\n')).toContain('hello GET /again')
    await closeEgress(dir)
  })

  it('reads proxy request lines', () => {
    expect(proxyTarget('CONNECT Api.Anthropic.com:443 HTTP/1.1')).toEqual({host: 'api.anthropic.com', port: 443, connect: true})
    expect(proxyTarget('CONNECT [::1]:8080 HTTP/1.1')).toEqual({host: '::1', port: 8080, connect: true})
    expect(proxyTarget('GET http://registry.example/x HTTP/1.1')).toEqual({host: 'registry.example', port: 80, connect: false})
    expect(proxyTarget('GET https://registry.example/x HTTP/1.1')).toBeUndefined()
    expect(proxyTarget('GET /x HTTP/1.1')).toBeUndefined()
    expect(proxyTarget('CONNECT host HTTP/1.1')).toBeUndefined()
  })
})
