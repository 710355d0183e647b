import {createHash} from 'node:crypto'
import http from 'node:http'
import net from 'node:net'
import type {AddressInfo} from 'node:net'
import {Duplex} from 'node:stream'
import Fastify, {type FastifyInstance, type FastifyReply} from 'fastify'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {PREVIEW_CSP, relayHttp} from './preview-proxy.js'

/** Waits until `value` has not changed over five looks 100 ms apart (at most `ms`). */
async function steady(value: () => number, ms = 20_000) {
  const deadline = Date.now() + ms
  let last = value()
  let same = 0
  while (same < 5) {
    if (Date.now() > deadline) throw new Error('the value never settled')
    await new Promise((r) => setTimeout(r, 100))
    const now = value()
    same = now === last ? same + 1 : 0
    last = now
  }
}

/** Polls `fn` until it returns true; fails after `ms`. */
async function waitFor(fn: () => boolean, ms = 10_000) {
  const deadline = Date.now() + ms
  while (!fn()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** One request to the relay; the answer's status, headers and body. */
function fetchVia(port: number, path: string, opts: {method?: string; body?: Buffer | string; chunked?: boolean; agent?: http.Agent} = {}) {
  return new Promise<{status: number; headers: http.IncomingHttpHeaders; body: Buffer}>((resolve, reject) => {
    const headers: Record<string, string> = opts.chunked ? {'transfer-encoding': 'chunked'} : opts.body !== undefined ? {'content-length': String(Buffer.byteLength(opts.body))} : {}
    const req = http.request({port, host: '127.0.0.1', path, method: opts.method ?? 'GET', headers: {...headers, 'content-type': 'text/plain'}, agent: opts.agent ?? false}, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks)}))
      res.on('error', reject)
    })
    req.on('error', reject)
    if (opts.chunked && opts.body !== undefined) for (const piece of [opts.body.slice(0, 3), opts.body.slice(3)]) req.write(piece)
    req.end(opts.chunked ? undefined : opts.body)
  })
}

const PIECE = 64 * 1024
const endlessPiece = (i: number) => Buffer.alloc(PIECE, i % 251)

describe('relayHttp: a preview request relayed over a byte stream to the agent\'s server', () => {
  let agent: http.Server
  let raw: net.Server
  let hub: FastifyInstance
  let hubPort: number
  /** What the raw server answers next (tests of answers node:http would not send). */
  let rawAnswer = ''
  const agentSeen: Array<{method: string; url: string; headers: http.IncomingHttpHeaders; body: string}> = []
  const stream = {blocked: false, written: 0}
  let lastReply: FastifyReply | null = null
  /** Connections the route opened to the agent, and a gate it waits at between opening and relaying. */
  const opened: net.Socket[] = []
  let gate: Promise<void> = Promise.resolve()
  let routeWaiting = false

  beforeAll(async () => {
    agent = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      // A long poll that never answers.
      if (req.url === '/hang') return
      if (req.url === '/endless') {
        // Writes until the relay stops reading it (a browser that does not read); each piece
        // its own bytes, so that one overwritten while the relay held it would show.
        res.writeHead(200, {'content-length': String(64 * 1024 * 1024)})
        const pump = () => {
          while (stream.written < 64 * 1024 * 1024) {
            const piece = endlessPiece(stream.written / PIECE)
            stream.written += piece.length
            if (!res.write(piece)) {
              stream.blocked = true
              return res.once('drain', () => ((stream.blocked = false), pump()))
            }
          }
          res.end()
        }
        return pump()
      }
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        agentSeen.push({method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString()})
        if (req.url === '/chunked') {
          res.writeHead(200, {'content-type': 'text/plain', 'set-cookie': ['app=1; Path=/', 'svc_session=planted']})
          res.write('first,')
          setImmediate(() => res.end('second'))
          return
        }
        if (req.url === '/empty') return res.writeHead(204).end()
        res.writeHead(200, {'content-type': 'text/plain', 'content-length': String(Buffer.byteLength(`echo:${Buffer.concat(chunks)}`))})
        res.end(req.method === 'HEAD' ? undefined : `echo:${Buffer.concat(chunks)}`)
      })
    })
    raw = net.createServer((socket) => {
      socket.once('data', (first: Buffer) => {
        socket.write(rawAnswer)
        // An answer that is cut short (or close-delimited) ends with the connection; one given
        // before the request's body was read (/early) leaves it open, reading on.
        if (!first.toString('latin1').startsWith('POST /early')) socket.end()
      })
    })
    await Promise.all([new Promise<void>((r) => agent.listen(0, '127.0.0.1', r)), new Promise<void>((r) => raw.listen(0, '127.0.0.1', r))])
    hub = Fastify()
    hub.removeAllContentTypeParsers()
    hub.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined))
    hub.all('/p/:target/*', async (request, reply) => {
      const {target} = request.params as {target: string}
      const port = ((target === 'raw' ? raw : agent).address() as AddressInfo).port
      const socket = net.connect({port, host: '127.0.0.1'})
      opened.push(socket)
      // `tunnel`: the agent's server behind a stream that is no socket, as a tunnel's is (read by 'data' events).
      const stream = target === 'tunnel' ? Duplex.from({readable: socket, writable: socket}) : socket
      lastReply = reply
      routeWaiting = true
      await gate
      routeWaiting = false
      const path = request.url.slice(`/p/${target}`.length)
      await relayHttp(request, reply, stream, {prefix: `/p/${target}`, path, port})
    })
    await hub.listen({port: 0, host: '127.0.0.1'})
    hubPort = (hub.server.address() as AddressInfo).port
  })

  afterAll(async () => {
    await hub?.close()
    agent?.close()
    raw?.close()
  })

  it('relays a Content-Length answer with the preview\'s headers, and request bodies in either framing', async () => {
    const plain = await fetchVia(hubPort, '/p/agent/echo?q=1', {method: 'POST', body: 'hello'})
    expect(plain).toMatchObject({status: 200, headers: {'content-length': '10', 'content-security-policy': PREVIEW_CSP, 'x-content-type-options': 'nosniff'}})
    expect(plain.body.toString()).toBe('echo:hello')
    expect(agentSeen.at(-1)).toMatchObject({method: 'POST', url: '/echo?q=1', headers: {host: `localhost:${(agent.address() as AddressInfo).port}`, connection: 'close', 'x-forwarded-prefix': '/p/agent'}})
    const chunked = await fetchVia(hubPort, '/p/agent/echo', {method: 'PUT', body: 'chunked body', chunked: true})
    expect(chunked.body.toString()).toBe('echo:chunked body')
    expect(agentSeen.at(-1)).toMatchObject({method: 'PUT', body: 'chunked body', headers: {'transfer-encoding': 'chunked'}})
  })

  it('relays a chunked answer (cookies kept inside the preview) and answers without a body', async () => {
    const r = await fetchVia(hubPort, '/p/agent/chunked')
    expect(r.body.toString()).toBe('first,second')
    expect(r.headers['set-cookie']).toEqual(['app=1; Path=/p/agent/'])
    expect(await fetchVia(hubPort, '/p/agent/empty')).toMatchObject({status: 204, body: Buffer.alloc(0)})
    const head = await fetchVia(hubPort, '/p/agent/echo', {method: 'HEAD'})
    expect(head).toMatchObject({status: 200, headers: {'content-length': '5'}, body: Buffer.alloc(0)})
  })

  it('drops what acts for the Hub\'s whole origin, and cookies that are the Hub\'s or have no name', async () => {
    rawAnswer = [
      'HTTP/1.1 200 OK',
      'NEL: {"report_to":"x","max_age":86400,"success_fraction":1}',
      'Report-To: {"group":"x","max_age":86400,"endpoints":[{"url":"https://agent.example/r"}]}',
      'Reporting-Endpoints: x="https://agent.example/r"',
      'Clear-Site-Data: "cookies"',
      'Strict-Transport-Security: max-age=31536000; includeSubDomains',
      'Alt-Svc: h2="agent.example:443"',
      'Accept-CH: Sec-CH-UA-Model',
      'Set-Cookie: =svc_session=junk',
      'Set-Cookie: svc_session=planted',
      'Set-Cookie: app=1; Path=/',
      'X-App: kept',
      'Content-Length: 2',
      '',
      'ok',
    ].join('\r\n')
    const r = await fetchVia(hubPort, '/p/raw/x')
    expect(r.status).toBe(200)
    for (const h of ['nel', 'report-to', 'reporting-endpoints', 'clear-site-data', 'strict-transport-security', 'alt-svc', 'accept-ch']) expect(r.headers[h], h).toBeUndefined()
    expect(r.headers['set-cookie']).toEqual(['app=1; Path=/p/raw/'])
    expect(r.headers['x-app']).toBe('kept')
  })

  it('keeps the browser\'s connection usable after each kind of answer, an early one included', async () => {
    const keep = new http.Agent({keepAlive: true, maxSockets: 1})
    try {
      const ports = new Set<number>()
      keep.on('free', (socket: net.Socket) => ports.add(socket.localPort!))
      expect((await fetchVia(hubPort, '/p/agent/chunked', {agent: keep})).body.toString()).toBe('first,second')
      rawAnswer = 'HTTP/1.1 413 Payload Too Large\r\nContent-Length: 4\r\n\r\nfull'
      const early = await fetchVia(hubPort, '/p/raw/early', {agent: keep, method: 'POST', body: 'x'.repeat(4 * 1024 * 1024)})
      expect(early).toMatchObject({status: 413, body: Buffer.from('full')})
      expect((await fetchVia(hubPort, '/p/agent/echo', {agent: keep, method: 'POST', body: 'again'})).body.toString()).toBe('echo:again')
      expect(ports.size).toBe(1)
    } finally {
      keep.destroy()
    }
  })

  it('a close-delimited answer ends with the connection; malformed or cut answers are 502 or a cut connection', async () => {
    rawAnswer = 'HTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil the end'
    expect((await fetchVia(hubPort, '/p/raw/x')).body.toString()).toBe('until the end')
    rawAnswer = 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab'
    const conflicting = await fetchVia(hubPort, '/p/raw/x')
    expect(conflicting.status).toBe(502)
    expect(conflicting.body.toString()).toMatch(/conflicting Content-Length/)
    rawAnswer = 'HTTP/1.1 200 OK\r\nX-Injected: a\r\n b\r\n\r\n'
    expect((await fetchVia(hubPort, '/p/raw/x')).status).toBe(502)
    rawAnswer = 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this'
    await expect(fetchVia(hubPort, '/p/raw/x')).rejects.toThrow(/aborted|socket hang up/)
    rawAnswer = 'not http at all\r\n\r\n'
    expect((await fetchVia(hubPort, '/p/raw/x')).status).toBe(502)
  })

  it('closes the agent connection (a long poll) when the browser left while it was being opened', async () => {
    let open: () => void = () => {}
    gate = new Promise<void>((r) => (open = r))
    const client = net.connect(hubPort, '127.0.0.1')
    client.on('error', () => {})
    client.write('GET /p/agent/hang HTTP/1.1\r\nhost: x\r\n\r\n')
    await waitFor(() => routeWaiting)
    const socket = opened.at(-1)!
    client.destroy()
    await waitFor(() => lastReply!.request.raw.socket.destroyed)
    open()
    gate = Promise.resolve()
    await waitFor(() => socket.destroyed)
  })

  it.each(['agent', 'tunnel'])('stops reading the agent\'s server while the browser does not read, within about 1 MiB held, and passes every byte on as it was (%s)', async (target) => {
    stream.written = 0
    stream.blocked = false
    let received = 0
    const got = createHash('sha256')
    const want = createHash('sha256')
    for (let i = 0; i < 1024; i++) want.update(endlessPiece(i))
    const done = new Promise<number>((resolve, reject) => {
      const req = http.get({port: hubPort, host: '127.0.0.1', path: `/p/${target}/endless`, agent: false}, (res) => {
        res.pause()
        void waitFor(() => stream.blocked)
          .then(() => steady(() => stream.written))
          .then(() => {
            // The agent's server is held up for good (it wrote nothing more for a while), not
            // just between two reads: what it wrote is what the kernel's buffers on both sides
            // and the relay's limit hold (~10 MiB here), far from the whole 64 MiB, which a relay
            // that never paused reads at once. The relay holds at most its limit plus a read.
            expect(stream.written).toBeLessThan(48 * 1024 * 1024)
            expect(lastReply!.raw.writableLength).toBeLessThanOrEqual(1024 * 1024 + 256 * 1024)
            res.on('data', (c: Buffer) => {
              received += c.length
              got.update(c)
            })
            res.on('end', () => resolve(received))
            res.resume()
          })
          .catch(reject)
      })
      req.on('error', reject)
    })
    expect(await done).toBe(64 * 1024 * 1024)
    expect(got.digest('hex')).toBe(want.digest('hex'))
  })
})
