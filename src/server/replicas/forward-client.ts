import {STREAM_OPEN_TIMEOUT_MS} from '../../api/tunnel-protocol.js'
import http, {type IncomingMessage} from 'node:http'
import https from 'node:https'
import type {Duplex} from 'node:stream'
import WebSocket, {createWebSocketStream} from 'ws'
import {AppError} from '../../api/app-error.js'
import {ERROR_CODES, type ErrorCode} from '../../api/error-codes.js'
import {StreamEnd} from '../../api/tunnel-streams.js'
import type {TunnelStream} from '../../domain/brokers/gateway.js'
import type {BrokerHolder} from '../../store/repositories/replicas.js'
import {signForReplica} from './replica-auth.js'

export const FORWARD_REQUEST_PATH = '/internal/v1/replicas/brokers/:brokerId/request'
export const FORWARD_STREAM_PATH = '/internal/v1/replicas/brokers/:brokerId/stream'
/** A flow-controlled byte stream (an agent's port, for previews and `svc agent forward`). */
export const FORWARD_DUPLEX_PATH = '/internal/v1/replicas/brokers/:brokerId/duplex'
/** Forwarded requests' body type: read as text, so the signature is checked over the bytes sent. */
export const FORWARD_CONTENT_TYPE = 'application/x-svc-forward'

const pathOf = (template: string, brokerId: string) => template.replace(':brokerId', encodeURIComponent(brokerId))

/** A forwarded stream's first message from the holding replica, and its last. */
export type StreamControl = {t: 'opened'} | {t: 'close'; error?: {code: string; message: string}} | {t: 'resize'; cols: number; rows: number}

/** Rebuilds the holder's AppError from its envelope; an unknown code is a broker error. */
function errorFrom(status: number, body: unknown, brokerId: string): AppError {
  const e = (body as {error?: {code?: string; message?: string; details?: Record<string, unknown>}} | null)?.error
  const code = e?.code && e.code in ERROR_CODES ? (e.code as ErrorCode) : 'broker_error'
  return new AppError(code, e?.message ?? `the replica holding broker ${brokerId} answered ${status}`, e?.details)
}

const unreachable = (brokerId: string, err: unknown, sent: boolean) =>
  new AppError('broker_unavailable', `the replica holding broker ${brokerId} did not answer (${(err as Error).message})`, {sent})

/** The holder's refusal of a WebSocket upgrade (its error envelope), as an AppError. */
function refusal(res: IncomingMessage, brokerId: string): Promise<AppError> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    res.on('data', (c: Buffer) => chunks.push(c))
    res.on('error', () => resolve(errorFrom(res.statusCode ?? 502, null, brokerId)))
    res.on('end', () => {
      let body: unknown = null
      try {
        body = JSON.parse(Buffer.concat(chunks).toString())
      } catch {}
      resolve(errorFrom(res.statusCode ?? 502, body, brokerId))
    })
  })
}

/** The op of a forwarded stream or duplex, in its query (signed with the path). */
const opQuery = (method: string, params: unknown) => `op=${Buffer.from(JSON.stringify({method, params})).toString('base64url')}`

/**
 * Forwarded requests reuse connections, one pool per holding replica (http.Agent pools per
 * host:port): a fresh TCP connection, and fetch's own per-call cost, made up most of the added
 * latency of a call through a replica that does not hold the broker. An idle connection is
 * closed after IDLE_SOCKET_MS, well inside the holder's idle timeout (60 s), so a pooled
 * connection is not reused just as the holder closes it.
 */
const IDLE_SOCKET_MS = 20_000
const pool = new http.Agent({keepAlive: true, timeout: IDLE_SOCKET_MS})
// A replica URL (SVC_REPLICA_URL) may be https: as the streams' wss: are.
const securePool = new https.Agent({keepAlive: true, timeout: IDLE_SOCKET_MS})

/**
 * One POST; rejects with the error marked `sent` when the request may have reached the holder
 * (it was written, or the holder did not answer in time), so nothing is retried blind.
 */
function post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<{status: number; text: string}> {
  return new Promise((resolve, reject) => {
    let written = false
    const secure = url.startsWith('https:')
    const req = (secure ? https : http).request(url, {method: 'POST', agent: secure ? securePool : pool, headers: {...headers, 'content-length': String(Buffer.byteLength(body))}}, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        clearTimeout(timer)
        resolve({status: res.statusCode ?? 502, text: Buffer.concat(chunks).toString('utf8')})
      })
      res.on('error', fail)
      res.on('close', () => res.complete || fail(new Error('the answer was cut off')))
    })
    const timer = setTimeout(() => {
      written = true
      req.destroy(new Error(`no answer in ${timeoutMs} ms`))
    }, timeoutMs)
    function fail(err: Error) {
      clearTimeout(timer)
      reject(Object.assign(err, {sent: written}))
    }
    req.on('finish', () => (written = true))
    req.on('error', fail)
    req.end(body)
  })
}

/**
 * The calling side of forwarding: a broker request or stream sent to the replica that holds the
 * broker's tunnel, signed for that replica. Errors come back as the holder raised them.
 */
export function forwardClient(self: {id: () => string; secretsKey: () => Buffer}) {
  const sign = (to: string, method: string, path: string, body = '') => signForReplica(self.secretsKey(), self.id(), to, method, path, body)

  return {
    async request<T>(holder: BrokerHolder, method: string, params: unknown, timeoutMs = 30_000): Promise<T> {
      const path = pathOf(FORWARD_REQUEST_PATH, holder.brokerId)
      const body = JSON.stringify({method, params, timeoutMs})
      const headers = {'content-type': FORWARD_CONTENT_TYPE, ...sign(holder.replicaId, 'POST', path, body)}
      // The holder times the broker out itself; this covers a holder that stops answering.
      const answer = await post(holder.url + path, headers, body, timeoutMs + 5_000).catch((err: Error & {sent?: boolean}) => {
        throw unreachable(holder.brokerId, err, err.sent === true)
      })
      let parsed: unknown = null
      try {
        parsed = JSON.parse(answer.text)
      } catch {}
      if (answer.status >= 400) throw errorFrom(answer.status, parsed, holder.brokerId)
      return (parsed as {result: T}).result
    },

    openStream(holder: BrokerHolder, method: string, params: unknown, timeoutMs = STREAM_OPEN_TIMEOUT_MS): Promise<TunnelStream> {
      const path = `${pathOf(FORWARD_STREAM_PATH, holder.brokerId)}?${opQuery(method, params)}`
      const ws = new WebSocket(holder.url.replace(/^http/, 'ws') + path, {headers: sign(holder.replicaId, 'GET', path), maxPayload: 64 * 1024 * 1024})
      const state = new StreamEnd()
      return new Promise<TunnelStream>((resolve, reject) => {
        let opened = false
        const timer = setTimeout(() => {
          ws.terminate()
          reject(new AppError('broker_timeout', `the replica holding broker ${holder.brokerId} did not open ${method} in time`))
        }, timeoutMs)
        ws.on('unexpected-response', (_req, res) => {
          clearTimeout(timer)
          void refusal(res, holder.brokerId).then(reject)
          ws.terminate()
        })
        ws.on('error', (err) => {
          clearTimeout(timer)
          if (!opened) reject(unreachable(holder.brokerId, err, false))
        })
        ws.on('message', (data, isBinary) => {
          if (isBinary) return void state.emitData(Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer))
          let msg: StreamControl
          try {
            msg = JSON.parse(data.toString())
          } catch {
            return
          }
          if (msg.t === 'opened' && !opened) {
            opened = true
            clearTimeout(timer)
            resolve({
              onData: (l) => state.onData(l),
              onClose: (l) => state.onClose(l),
              write: (chunk) => {
                if (!state.closed && ws.readyState === ws.OPEN) ws.send(chunk, {binary: true})
              },
              resize: (cols, rows) => {
                if (!state.closed && ws.readyState === ws.OPEN) ws.send(JSON.stringify({t: 'resize', cols, rows} satisfies StreamControl))
              },
              close: () => {
                if (state.end()) ws.close(1000)
              },
            })
          } else if (msg.t === 'close') {
            if (!opened) {
              clearTimeout(timer)
              reject(new AppError('broker_error', `broker: ${msg.error?.message ?? 'stream refused'}`, {brokerCode: msg.error?.code}))
            }
            state.end(msg.error)
            ws.close(1000)
          }
        })
        ws.on('close', () => {
          clearTimeout(timer)
          if (!opened) reject(new AppError('broker_unavailable', `the replica holding broker ${holder.brokerId} closed the stream`))
          state.end({code: 'broker_unavailable', message: 'the replica holding the broker went away'})
        })
      })
    },

    /**
     * A byte stream to the holder's broker (tunnel-duplex.ts there), relayed over one WebSocket
     * of binary frames: both ends are Node streams, so backpressure crosses the replicas as TCP
     * flow control and nothing is buffered whole. Resolves once the holder has opened it; a
     * refusal (the broker's `brokerCode` in its details) comes back as the holder's answer to
     * the upgrade.
     */
    openDuplex(holder: BrokerHolder, method: string, params: unknown, timeoutMs = STREAM_OPEN_TIMEOUT_MS): Promise<Duplex> {
      const path = `${pathOf(FORWARD_DUPLEX_PATH, holder.brokerId)}?${opQuery(method, params)}`
      const ws = new WebSocket(holder.url.replace(/^http/, 'ws') + path, {headers: sign(holder.replicaId, 'GET', path), maxPayload: 64 * 1024 * 1024})
      return new Promise<Duplex>((resolve, reject) => {
        const timer = setTimeout(() => {
          ws.terminate()
          reject(new AppError('broker_timeout', `the replica holding broker ${holder.brokerId} did not open ${method} in time`))
        }, timeoutMs)
        ws.once('unexpected-response', (_req, res) => {
          clearTimeout(timer)
          void refusal(res, holder.brokerId).then((err) => {
            ws.terminate()
            reject(err)
          })
        })
        // After the open, errors reach the stream (createWebSocketStream destroys it with them).
        ws.on('error', (err) => {
          clearTimeout(timer)
          reject(unreachable(holder.brokerId, err, false))
        })
        ws.once('open', () => {
          clearTimeout(timer)
          resolve(createWebSocketStream(ws))
        })
      })
    },
  }
}

export type ForwardClient = ReturnType<typeof forwardClient>
