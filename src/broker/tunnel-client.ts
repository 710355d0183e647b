import WebSocket from 'ws'
import type {Logger} from 'pino'
import {signRequest} from '../api/broker-signing.js'
import {TUNNEL_PATH, type TunnelMessage} from '../api/tunnel-protocol.js'
import {StreamTable} from '../api/tunnel-streams.js'

export interface TunnelHandlers {
  /** Called on every (re)connection; returns the hello event's data. */
  hello(): unknown
  request(method: string, params: unknown): Promise<unknown>
  openStream(sid: number, method: string, params: unknown, io: StreamIo): Promise<void>
}

/** The broker's side of one stream. */
export interface StreamIo {
  send(data: Buffer): void
  close(error?: {code: string; message: string}): void
  onData(listener: (data: Buffer) => void): void
  onResize(listener: (cols: number, rows: number) => void): void
  onClose(listener: () => void): void
}


/**
 * The broker's persistent outbound WebSocket to the Hub. The upgrade is HMAC-signed with the
 * broker's secret; the connection is kept alive with pings (answered automatically) and
 * re-established with exponential backoff and jitter after any drop.
 */
export class TunnelClient {
  private ws: WebSocket | null = null
  private stopped = false
  private attempt = 0
  private timer: NodeJS.Timeout | null = null
  private streams = new StreamTable()
  connected = false
  private readonly connectedListeners: Array<() => void> = []

  constructor(
    private readonly hubUrl: string,
    private readonly brokerId: string,
    private readonly secret: string,
    private readonly handlers: TunnelHandlers,
    private readonly logger: Logger,
  ) {}

  /** Runs `listener` after every (re)connection, once the hello is sent. */
  onConnected(listener: () => void) {
    this.connectedListeners.push(listener)
  }

  start() {
    this.stopped = false
    this.connect()
  }

  stop() {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    this.ws?.close(1000, 'broker stopping')
    this.closeStreams()
  }

  /** Sends a broker -> Hub event; dropped silently while disconnected (the next hello resyncs). */
  event(event: string, data: unknown) {
    this.send({t: 'evt', event, data})
  }

  private send(msg: TunnelMessage) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg))
  }

  private connect() {
    const url = new URL(TUNNEL_PATH, this.hubUrl)
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
    const headers = signRequest(this.brokerId, this.secret, 'GET', TUNNEL_PATH, '')
    const ws = new WebSocket(url, {headers, handshakeTimeout: 10_000})
    this.ws = ws
    ws.on('open', () => {
      this.attempt = 0
      this.connected = true
      this.logger.info({hub: this.hubUrl}, 'tunnel connected')
      this.event('hello', this.handlers.hello())
      for (const l of this.connectedListeners) l()
    })
    ws.on('message', (raw) => {
      let msg: TunnelMessage
      try {
        msg = JSON.parse(raw.toString())
      } catch {
        return
      }
      this.handle(msg)
    })
    ws.on('unexpected-response', (_req, res) => {
      this.logger.warn({status: res.statusCode}, 'tunnel refused by the Hub')
      ws.terminate()
    })
    ws.on('error', (err) => this.logger.debug({err: err.message}, 'tunnel error'))
    ws.on('close', () => {
      if (this.ws !== ws) return
      const was = this.connected
      this.connected = false
      this.closeStreams()
      if (was) this.logger.warn('tunnel lost')
      if (!this.stopped) this.scheduleReconnect()
    })
  }

  private scheduleReconnect() {
    const base = Math.min(10_000, 250 * 2 ** this.attempt++)
    const delay = base / 2 + Math.random() * (base / 2)
    this.timer = setTimeout(() => this.connect(), delay)
    this.timer.unref?.()
  }

  private closeStreams() {
    this.streams.endAll()
  }

  private handle(msg: TunnelMessage) {
    switch (msg.t) {
      case 'req':
        this.handlers.request(msg.method, msg.params).then(
          (result) => this.send({t: 'res', id: msg.id, ok: true, result: result ?? null}),
          (err: Error & {code?: string; details?: Record<string, unknown>}) =>
            this.send({t: 'res', id: msg.id, ok: false, error: {code: typeof err.code === 'string' ? err.code : 'broker_error', message: err.message, ...(err.details && {details: err.details})}}),
        )
        return
      case 'open': {
        const sid = msg.sid
        const state = this.streams.open(sid)
        const io: StreamIo = {
          send: (d) => !state.closed && this.send({t: 'data', sid, d: d.toString('base64')}),
          close: (error) => {
            if (this.streams.end(sid)) this.send({t: 'close', sid, ...(error && {error})})
          },
          onData: (l) => state.onData(l),
          onResize: (l) => state.onResize(l),
          // A stream the Hub closed while it was still opening (a slow attach) still closes.
          onClose: (l) => state.onClose(() => l()),
        }
        this.handlers.openStream(sid, msg.method, msg.params, io).then(
          () => this.send({t: 'opened', sid}),
          (err: Error & {code?: string}) => io.close({code: typeof err.code === 'string' ? err.code : 'broker_error', message: err.message}),
        )
        return
      }
      case 'data':
        this.streams.get(msg.sid)?.emitData(Buffer.from(msg.d, 'base64'))
        return
      case 'ctl':
        if (msg.resize) this.streams.get(msg.sid)?.emitResize(msg.resize.cols, msg.resize.rows)
        return
      case 'close':
        this.streams.end(msg.sid)
        return
    }
  }
}
