import WebSocket from 'ws'
import type {Logger} from 'pino'
import {signRequest} from '../api/broker-signing.js'
import {TUNNEL_PATH, type TunnelMessage} from '../api/tunnel-protocol.js'
import {StreamTable} from '../api/tunnel-streams.js'
import {DuplexTable, TunnelDuplex} from '../api/tunnel-duplex.js'

export interface TunnelHandlers {
  /** Called on every (re)connection; returns the hello event's data. */
  hello(): unknown
  request(method: string, params: unknown): Promise<unknown>
  openStream(sid: number, method: string, params: unknown, io: StreamIo): Promise<void>
  /** A byte stream with flow control (an agent's port, tunnel-duplex.ts); resolves once it is connected. */
  openDuplex?(method: string, params: unknown, duplex: TunnelDuplex): Promise<void>
}

/** The broker's side of one stream. */
export interface StreamIo {
  send(data: Buffer): void
  close(error?: {code: string; message: string}): void
  onData(listener: (data: Buffer) => void): void
  onResize(listener: (cols: number, rows: number) => void): void
  onClose(listener: () => void): void
}


/** A Hub that sent nothing (not even its ping, every 20 s) for this long is taken as gone. */
const SILENT_HUB_MS = 45_000
/** Backoff cap once every URL failed: a replica coming back is found within this. */
const MAX_BACKOFF_MS = 5000

/**
 * Masking (RFC 6455 10.3) keeps bytes a sender chooses (here an agent's server's answers, in a
 * preview) from reading as something else to a proxy on the way that does not speak WebSocket.
 * On loopback there is no such proxy, and under TLS none sees the bytes: there the broker sends
 * with an all-zero key, which ws takes as "do not mask", sparing a copy and a pass over every
 * byte of a preview (the largest cost of a co-located broker's preview, on one event loop).
 */
function unmaskedIsSafe(url: URL): boolean {
  if (url.protocol === 'wss:') return true
  const host = url.hostname.replace(/^\[|\]$/g, '')
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host)
}
const zeroMask = (mask: Buffer) => void mask.fill(0)

/**
 * The broker's persistent outbound WebSocket to the Hub. The upgrade is HMAC-signed with the
 * broker's secret; the connection is kept alive with pings (answered automatically) and
 * re-established after any drop.
 *
 * A deployment may have several replicas: the broker is given every replica's URL (or one
 * load-balanced URL) and holds one connection at a time. It connects to the first URL that
 * answers; when that connection is lost it tries the next URL at once (the lost replica is
 * the least likely to answer), going round the list, and waits with exponential backoff and
 * jitter (at most 5 s) only after a whole round failed. So a killed replica's brokers are on
 * a survivor within a second or two.
 */
export class TunnelClient {
  private ws: WebSocket | null = null
  private stopped = false
  /** Rounds of the URL list that failed in a row (the backoff's exponent). */
  private rounds = 0
  /** Index in `hubUrls` of the URL tried (or connected) now, and failures in this round. */
  private index = 0
  private failedInRound = 0
  private timer: NodeJS.Timeout | null = null
  private silence: NodeJS.Timeout | null = null
  private streams = new StreamTable()
  private duplexes = new DuplexTable()
  connected = false
  private readonly connectedListeners: Array<() => void> = []
  private readonly hubUrls: string[]

  constructor(
    hubUrls: string | string[],
    private readonly brokerId: string,
    private readonly secret: string,
    private readonly handlers: TunnelHandlers,
    private readonly logger: Logger,
  ) {
    this.hubUrls = Array.isArray(hubUrls) ? hubUrls : [hubUrls]
    if (!this.hubUrls.length) throw new Error('a tunnel needs at least one Hub URL')
  }

  /** The URL of the replica connected to now (the one tried last while disconnected). */
  get hubUrl(): string {
    return this.hubUrls[this.index]
  }

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
    if (this.silence) clearTimeout(this.silence)
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

  /** (Re)arms the watch that cuts a connection on which the Hub went silent (a network cut sends no close). */
  private heard(ws: WebSocket) {
    if (this.silence) clearTimeout(this.silence)
    this.silence = setTimeout(() => {
      this.logger.warn({hub: this.hubUrl}, 'the Hub sent nothing for too long; reconnecting')
      ws.terminate()
    }, SILENT_HUB_MS)
    this.silence.unref?.()
  }

  private connect() {
    const hubUrl = this.hubUrl
    const url = new URL(TUNNEL_PATH, hubUrl)
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
    const headers = signRequest(this.brokerId, this.secret, 'GET', TUNNEL_PATH, '')
    const ws = new WebSocket(url, {headers, handshakeTimeout: 10_000, ...(unmaskedIsSafe(url) && {generateMask: zeroMask})})
    this.ws = ws
    ws.on('open', () => {
      this.rounds = 0
      this.failedInRound = 0
      this.connected = true
      this.heard(ws)
      this.logger.info({hub: hubUrl}, 'tunnel connected')
      this.event('hello', this.handlers.hello())
      for (const l of this.connectedListeners) l()
    })
    ws.on('ping', () => this.heard(ws))
    ws.on('message', (raw, isBinary) => {
      this.heard(ws)
      if (isBinary) return this.duplexes.frame(raw as Buffer)
      let msg: TunnelMessage
      try {
        msg = JSON.parse(raw.toString())
      } catch {
        return
      }
      this.handle(msg)
    })
    ws.on('unexpected-response', (_req, res) => {
      this.logger.warn({status: res.statusCode, hub: hubUrl}, 'tunnel refused by the Hub')
      ws.terminate()
    })
    ws.on('error', (err) => this.logger.debug({err: err.message, hub: hubUrl}, 'tunnel error'))
    ws.on('close', () => {
      if (this.ws !== ws) return
      if (this.silence) clearTimeout(this.silence)
      const was = this.connected
      this.connected = false
      this.closeStreams()
      if (was) this.logger.warn({hub: hubUrl}, 'tunnel lost')
      if (!this.stopped) this.scheduleReconnect(was)
    })
  }

  /**
   * The next try: the next URL at once (after a short jitter, so brokers of a dead replica do
   * not arrive in one burst), or, once every URL of this round failed, a backoff first.
   */
  private scheduleReconnect(wasConnected: boolean) {
    if (wasConnected) this.failedInRound = 0
    this.index = (this.index + 1) % this.hubUrls.length
    let delay: number
    if (!wasConnected && ++this.failedInRound >= this.hubUrls.length) {
      this.failedInRound = 0
      const base = Math.min(MAX_BACKOFF_MS, 250 * 2 ** this.rounds++)
      delay = base / 2 + Math.random() * (base / 2)
    } else delay = Math.random() * 200
    this.timer = setTimeout(() => this.connect(), delay)
    this.timer.unref?.()
  }

  private closeStreams() {
    this.streams.endAll()
    this.duplexes.endAll({code: 'broker_unavailable', message: 'tunnel lost'})
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
        if (msg.flow) return this.openDuplex(sid, msg.method, msg.params)
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
        if (!this.duplexes.closed(msg.sid)) this.streams.end(msg.sid)
        return
      case 'ack':
        this.duplexes.get(msg.sid)?.acked(msg.n)
        return
    }
  }

  private openDuplex(sid: number, method: string, params: unknown) {
    const duplex = this.duplexes.add(
      new TunnelDuplex(sid, {
        data: (frame) => this.ws?.readyState === WebSocket.OPEN && this.ws.send(frame, {binary: true}),
        ack: (n) => this.send({t: 'ack', sid, n}),
        close: (error) => this.send({t: 'close', sid, ...(error && {error})}),
      }),
    )
    const opening = this.handlers.openDuplex ? this.handlers.openDuplex(method, params, duplex) : Promise.reject(Object.assign(new Error(`this broker does not support ${method}`), {code: 'unsupported_method'}))
    opening.then(
      () => this.send({t: 'opened', sid}),
      (err: Error & {code?: string}) => duplex.destroy(Object.assign(new Error(err.message), {code: err.code})),
    )
  }
}
