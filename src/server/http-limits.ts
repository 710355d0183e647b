import type {IncomingMessage} from 'node:http'
import type {Duplex} from 'node:stream'
import WebSocket, {type WebSocketServer} from 'ws'
import {TUNNEL_PATH} from '../api/tunnel-protocol.js'

/**
 * Limits of the Hub's HTTP server (docs/architecture.md "Connection limits"). Every value can be
 * given to buildApp, so tests run with short timeouts and small caps instead of waiting.
 */
export interface HttpLimits {
  /** The request headers must arrive within this (Node's headersTimeout), else 408. */
  headersTimeoutMs: number
  /** The whole request, body included, must arrive within this (Node's requestTimeout), else 408. */
  requestTimeoutMs: number
  /** A connection with no bytes either way for this long is closed (a stalled upload, an idle keep-alive). */
  idleTimeoutMs: number
  /** How often Node checks the two request timeouts; a timeout is enforced within this much. */
  timeoutCheckMs: number
  /** Open connections at once (WebSockets included); more are closed on accept. */
  maxConnections: number
  /** Largest WebSocket message on attach and log sockets. */
  clientWsMaxPayload: number
  /** Largest WebSocket message on a broker tunnel (it carries log archives and command results). */
  tunnelWsMaxPayload: number
  /** Open attach sockets per caller (user, agent or broker) and per agent, on this Hub process. */
  attachPerCaller: number
  attachPerAgent: number
  /** Open live-log sockets per caller and per agent, on this Hub process. */
  logsPerCaller: number
  logsPerAgent: number
  /** Refused credentials (401) one client address may cause per window before it gets 429. */
  authFailuresPerWindow: number
  authFailureWindowMs: number
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 120_000,
  idleTimeoutMs: 60_000,
  timeoutCheckMs: 2_000,
  maxConnections: 1024,
  clientWsMaxPayload: 64 * 1024,
  tunnelWsMaxPayload: 16 * 1024 * 1024,
  attachPerCaller: 8,
  attachPerAgent: 4,
  logsPerCaller: 16,
  logsPerAgent: 8,
  authFailuresPerWindow: 30,
  authFailureWindowMs: 60_000,
}

const payloadLimits = new WeakMap<Duplex, number>()

/**
 * A WebSocket whose max message size is the one recorded for its socket at the upgrade (see
 * `limitPayloadPerPath`). `ws` applies one maxPayload to every socket of a server; the Hub
 * needs 64 KiB for terminals and logs but more for broker tunnels, on the same server.
 */
export class PerPathWebSocket extends WebSocket {
  setSocket(socket: Duplex, head: Buffer, options: {maxPayload?: number}) {
    const limit = payloadLimits.get(socket)
    ;(WebSocket.prototype as unknown as {setSocket: PerPathWebSocket['setSocket']}).setSocket.call(this, socket, head, limit === undefined ? options : {...options, maxPayload: limit})
  }
}

/**
 * Records each upgrade's max message size before its WebSocket is set up: `headers` is emitted
 * synchronously just before `setSocket` in ws's upgrade.
 */
export function limitPayloadPerPath(wss: WebSocketServer, limits: HttpLimits) {
  wss.on('headers', (_headers: string[], req: IncomingMessage) => {
    const path = (req.url ?? '').split('?')[0]
    payloadLimits.set(req.socket, path === TUNNEL_PATH ? limits.tunnelWsMaxPayload : limits.clientWsMaxPayload)
  })
}
