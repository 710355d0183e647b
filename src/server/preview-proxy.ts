/**
 * Relaying HTTP and WebSocket to an agent's port over a byte stream of its broker's tunnel
 * (previews, agent-ports.ts). Streamed both ways: the request body is written to the stream in
 * its framing, the answer's head parsed (preview-response.ts) and its body passed on as it
 * arrives (reading paused while ~1 MiB waits for the browser), and a WebSocket upgrade becomes a
 * plain byte relay.
 *
 * What crosses to the agent is cleaned of the person's credentials (the Authorization header,
 * the Hub's cookies); what comes back is kept inside the preview: its pages are served in a
 * CSP sandbox (an opaque origin, so a script of the agent's cannot use the Hub's API with the
 * person's session), its cookies are scoped to the preview's path and may not be the Hub's, and
 * a redirect to a path of the agent's server stays under the preview.
 */
import type {IncomingHttpHeaders} from 'node:http'
import type {Duplex} from 'node:stream'
import type {FastifyReply, FastifyRequest} from 'fastify'
import {AnswerReader, MalformedAnswer} from './preview-response.js'
import {readIntoBuffer} from './preview-read.js'

/** The preview's own policy, added to any the agent's server sends. */
export const PREVIEW_CSP = 'sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads'

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host'])
/** Cookies of the Hub's own (`svc_session`...): never sent to, or set by, an agent. */
const HUB_COOKIE = /^svc_/i
/** A Set-Cookie's name (an RFC 9110 token before its `=`); one without is not passed on. */
const COOKIE_NAME = /^\s*([!#$%&'*+\-.^_`|~0-9A-Za-z]+)\s*=/
/**
 * Answer headers that act for the whole origin, not the page: a preview is served on the Hub's
 * origin, so an agent's server must not set its reporting endpoints (which would see the URLs of
 * later requests, preview links' tokens included), clear its cookies and storage, pin HSTS or
 * alternative services, or ask for client hints or a login state for it.
 */
const ORIGIN_WIDE = new Set(['nel', 'report-to', 'reporting-endpoints', 'clear-site-data', 'strict-transport-security', 'alt-svc', 'accept-ch', 'critical-ch', 'set-login', 'origin-agent-cluster', 'public-key-pins', 'expect-ct', 'service-worker-allowed'])

export interface PreviewTarget {
  /** `/agents/<id>/ports/<port>[/~<token>]` (no trailing slash): where the agent's paths are mounted. */
  prefix: string
  /** Authorized by a preview link's token (not a bearer or cookie). */
  tokenPath?: boolean
  /** Path and query to ask the agent's server for (starts with `/`). */
  path: string
  port: number
}

/** The request's headers as the agent's server gets them. */
function forwardHeaders(request: FastifyRequest, t: PreviewTarget, keepUpgrade: boolean): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [k, v] of Object.entries(request.headers)) {
    if (v === undefined || k === 'authorization') continue
    if (HOP_BY_HOP.has(k) && !(keepUpgrade && (k === 'connection' || k === 'upgrade'))) continue
    out[k] = v
  }
  const cookies = (request.headers.cookie ?? '').split(';').map((c) => c.trim()).filter((c) => c && !HUB_COOKIE.test(c.split('=')[0]))
  if (cookies.length) out.cookie = cookies.join('; ')
  else delete out.cookie
  // Dev servers check Host against their own name (DNS rebinding): they are asked as localhost.
  out.host = `localhost:${t.port}`
  out['x-forwarded-host'] = request.headers.host ?? ''
  out['x-forwarded-proto'] = request.protocol
  out['x-forwarded-prefix'] = t.prefix
  out['x-forwarded-for'] = request.ip
  return out
}

/** The agent's response headers as the browser gets them. */
function backHeaders(headers: IncomingHttpHeaders, t: PreviewTarget): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k) && !ORIGIN_WIDE.has(k)) out[k] = v
  const location = typeof headers.location === 'string' ? headers.location : undefined
  if (location) {
    // `/login` or `http://localhost:<port>/login` from the agent's server: under the preview.
    const local = new RegExp(`^https?://(localhost|127\\.0\\.0\\.1|\\[::1\\])(:${t.port})?(?=/|$)`, 'i')
    const path = location.replace(local, '')
    if (path.startsWith('/') && !path.startsWith('//')) out.location = `${t.prefix}${path}`
  }
  const cookies = ([] as string[]).concat(headers['set-cookie'] ?? [])
  const kept = cookies.filter((c) => {
    // A nameless cookie (`=svc_session=x`) is sent back as `svc_session=x`: only named ones pass.
    const name = COOKIE_NAME.exec(c)?.[1]
    return name !== undefined && !HUB_COOKIE.test(name)
  }).map((c) => `${c.split(';').filter((part) => !/^\s*(path|domain)\s*=/i.test(part)).join(';')}; Path=${t.prefix}/`)
  if (kept.length) out['set-cookie'] = kept
  else delete out['set-cookie']
  out['content-security-policy'] = ([] as string[]).concat(out['content-security-policy'] ?? [], PREVIEW_CSP)
  // The sandboxed page's own requests come from an opaque origin: on a preview link (the token
  // is the credential, no cookie is involved) they may read the answers, as same-origin ones would.
  if (t.tokenPath) out['access-control-allow-origin'] = '*'
  out['x-content-type-options'] = 'nosniff'
  out['referrer-policy'] = 'no-referrer'
  return out
}

/** Bytes of an answer held for a browser that reads slower than the agent's server writes, before reading it pauses. */
const BUFFERED_MAX = 1024 * 1024

/**
 * The buffer an answer is read into (preview-read.ts): 256 KiB, as large reads cost less per
 * byte (a 10 MiB download's Hub CPU: 9-12 ms with 64 KiB, 7-9 ms with 256 KiB, 7.5 ms with
 * 1 MiB in a stand-alone relay). A few are kept for the next requests, so a small request
 * does not map and fault in a new one.
 */
const READ_BUFFER = 256 * 1024
const spare: Buffer[] = []
const SPARE_MAX = 4

/**
 * Relays one HTTP request over `stream` and streams the answer back (the reply is taken over).
 * The request is written as it came (its body with its own framing); the answer's head is
 * parsed and cleaned (backHeaders) and its body passed on as the buffers that arrive
 * (preview-response.ts), so a download costs a read and a write per chunk and nothing more.
 */
export function relayHttp(request: FastifyRequest, reply: FastifyReply, stream: Duplex, t: PreviewTarget): Promise<void> {
  reply.hijack()
  const res = reply.raw
  const req = request.raw
  return new Promise<void>((resolve) => {
    let settled = false
    const settle = () => {
      if (settled) return
      settled = true
      req.unpipe(stream)
      stream.destroy()
      // A body the agent did not wait for is read to its end, so the browser's connection can
      // carry its next request.
      if (!req.readableEnded) req.resume()
      resolve()
    }
    const fail = (status: number, message: string) => {
      if (!res.headersSent) res.writeHead(status, {'content-type': 'text/plain; charset=utf-8'}).end(`${message}\n`)
      else res.destroy()
      settle()
    }
    // Read into a reused buffer (preview-read.ts), a write the kernel did not take at once still
    // holds its bytes: then nothing more is read until the browser's socket drains.
    let reused = false
    const reader = new AnswerReader(
      request.method === 'HEAD',
      (h) => res.writeHead(h.status, backHeaders(h.headers, t)),
      (chunk) => {
        res.write(chunk)
        // Paused past 1 MiB rather than the socket's 16 KiB mark (which every 64 KiB read
        // passes): reading the agent runs ahead of the browser's socket instead of taking turns
        // with it per chunk, and a slow browser still holds the agent's server back.
        if (!reused && res.writableLength > BUFFERED_MAX && !stream.isPaused()) {
          stream.pause()
          res.once('drain', () => stream.resume())
        }
      },
    )
    const take = (chunk: Buffer) => {
      try {
        if (reader.feed(chunk)) {
          res.end()
          settle()
        }
      } catch (err) {
        fail(502, err instanceof MalformedAnswer ? err.message : `the agent's answer could not be relayed: ${(err as Error).message}`)
      }
    }
    // The browser left while the port was being opened: its close has passed already.
    if (req.socket.destroyed) return settle()
    const buffer = spare.pop() ?? Buffer.allocUnsafeSlow(READ_BUFFER)
    reused = readIntoBuffer(stream, buffer, (chunk) => {
      take(chunk)
      // node:http corks the socket for a write until the next tick: uncorked now, so that
      // what the kernel did not take is known before the buffer is read into again.
      if (res.socket?.writableCorked) res.socket.uncork()
      if (settled || res.writableLength === 0) return true
      res.once('drain', () => stream.resume())
      return false
    })
    const release = () => void (spare.length < SPARE_MAX && spare.push(buffer))
    if (!reused) {
      release()
      stream.on('data', take)
    }
    stream.on('end', () => {
      if (settled) return
      if (reader.end()) {
        res.end()
        settle()
      } else fail(502, 'the agent\'s server ended the response early')
    })
    stream.on('error', (err) => fail(502, `the agent's server did not answer: ${err.message}`))
    stream.on('close', () => settled || fail(502, 'the agent\'s server closed the connection'))
    res.on('close', settle)
    // Free again once the answer is written out or the browser's connection is gone, and after
    // settle closed the agent's side: only then does nothing write from it or read into it.
    if (reused) res.once('close', release)

    const headers: Record<string, string | string[]> = {...forwardHeaders(request, t, false), connection: 'close'}
    // node:http decoded the body: it goes on in the framing it came with (never half-closed:
    // servers that see the request's end as the client leaving would drop their answer).
    const chunked = request.headers['transfer-encoding'] !== undefined
    if (chunked) {
      delete headers['content-length']
      headers['transfer-encoding'] = 'chunked'
    }
    stream.write(requestHead(request.method, t.path, headers))
    if (chunked) {
      req.on('data', (c: Buffer) => {
        if (!stream.write(Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, CRLF])) && !settled) {
          req.pause()
          stream.once('drain', () => req.resume())
        }
      })
      req.on('end', () => settled || stream.write('0\r\n\r\n'))
    } else if (request.headers['content-length'] !== undefined) req.pipe(stream, {end: false})
  })
}

const CRLF = Buffer.from('\r\n')

/** A request head as the agent's server gets it. */
function requestHead(method: string, path: string, headers: Record<string, string | string[]>): Buffer {
  const lines = [`${method} ${path} HTTP/1.1`]
  for (const [k, v] of Object.entries(headers)) for (const value of ([] as string[]).concat(v)) lines.push(`${k}: ${value.replace(/[\r\n]/g, '')}`)
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1')
}

/** The bytes of an upgrade request as the agent's server gets them. */
export function upgradeHead(request: FastifyRequest, t: PreviewTarget): Buffer {
  return requestHead(request.method, t.path, forwardHeaders(request, t, true))
}

/** Joins an upgraded client socket to `stream` (the agent's server answers the handshake itself). */
export function relayUpgrade(socket: Duplex, head: Buffer, stream: Duplex, requestHead: Buffer): void {
  // The client left while the port was being opened: its close has passed already.
  if (socket.destroyed) return void stream.destroy()
  stream.write(requestHead)
  if (head.length) stream.write(head)
  socket.on('error', () => stream.destroy())
  stream.on('error', () => socket.destroy())
  stream.on('close', () => socket.destroy())
  socket.on('close', () => stream.destroy())
  stream.pipe(socket)
  socket.pipe(stream)
}

/** An HTTP answer written on a socket that was to be upgraded (a refusal before any relay). */
export function refuseUpgrade(socket: Duplex, status: number, body: string): void {
  const text = `${body}\n`
  socket.end(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : status === 404 ? 'Not Found' : 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`)
}

/** A CORS preflight of a preview link's page, answered here: the token in the path is the credential. */
export function preflight(request: FastifyRequest, reply: FastifyReply) {
  return reply
    .code(204)
    .header('access-control-allow-origin', '*')
    .header('access-control-allow-methods', String(request.headers['access-control-request-method'] ?? 'GET'))
    .header('access-control-allow-headers', String(request.headers['access-control-request-headers'] ?? ''))
    .header('access-control-max-age', '600')
    .send()
}
