import type {WebSocket} from 'ws'
import {AppError} from '../../api/app-error.js'
import {STREAM_OPEN_TIMEOUT_MS, type HelloEvent, type TunnelMessage} from '../../api/tunnel-protocol.js'
import type {TunnelStream} from '../../domain/brokers/gateway.js'
import {StreamTable} from '../../api/tunnel-streams.js'
import {DuplexTable, TunnelDuplex} from '../../api/tunnel-duplex.js'

type Pending = {resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout}


/**
 * One broker's tunnel, as seen by the Hub: requests correlated by ID with timeouts, multiplexed
 * streams, and events handed to `onEvent`. Closing the socket fails everything in flight.
 */
export class BrokerConnection {
  hello: HelloEvent | null = null
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private readonly streams = new StreamTable()
  /** Byte streams with flow control (an agent's port): binary data messages. */
  private readonly duplexes = new DuplexTable()
  /** Streams waiting for the broker's `opened`. */
  private readonly opening = new Map<number, {resolve: () => void; reject: (e: Error) => void}>()
  private alive = true
  private readonly pinger: NodeJS.Timeout

  constructor(
    readonly brokerId: string,
    private readonly ws: WebSocket,
    private readonly onEvent: (event: string, data: unknown) => void,
    pingMs = 20_000,
  ) {
    ws.on('message', (raw, isBinary) => {
      if (isBinary) return this.duplexes.frame(raw as Buffer)
      let msg: TunnelMessage
      try {
        msg = JSON.parse(raw.toString())
      } catch {
        return
      }
      this.handle(msg)
    })
    ws.on('pong', () => (this.alive = true))
    // A broker that stops answering pings is cut off, so a dead tunnel is noticed in 2 intervals.
    this.pinger = setInterval(() => {
      if (!this.alive) return ws.terminate()
      this.alive = false
      ws.ping()
    }, pingMs)
    this.pinger.unref()
    ws.on('close', () => this.failAll())
  }

  get open(): boolean {
    return this.ws.readyState === this.ws.OPEN
  }

  private send(msg: TunnelMessage) {
    if (!this.open) throw new AppError('broker_unavailable', `broker ${this.brokerId} is not connected`, {sent: false})
    this.ws.send(JSON.stringify(msg))
  }

  private handle(msg: TunnelMessage) {
    switch (msg.t) {
      case 'res': {
        const p = this.pending.get(msg.id)
        if (!p) return
        this.pending.delete(msg.id)
        clearTimeout(p.timer)
        if (msg.ok) p.resolve(msg.result)
        else p.reject(new AppError('broker_error', `broker: ${msg.error.message}`, {...msg.error.details, brokerCode: msg.error.code}))
        return
      }
      case 'opened':
        this.opening.get(msg.sid)?.resolve()
        this.opening.delete(msg.sid)
        return
      case 'data':
        this.streams.get(msg.sid)?.emitData(Buffer.from(msg.d, 'base64'))
        return
      case 'close': {
        const waiting = this.opening.get(msg.sid)
        this.opening.delete(msg.sid)
        waiting?.reject(new AppError('broker_error', `broker: ${msg.error?.message ?? 'stream refused'}`, {brokerCode: msg.error?.code}))
        if (!this.duplexes.closed(msg.sid, msg.error)) this.streams.end(msg.sid, msg.error)
        return
      }
      case 'ack':
        this.duplexes.get(msg.sid)?.acked(msg.n)
        return
      case 'evt':
        if (msg.event === 'hello') this.hello = msg.data as HelloEvent
        this.onEvent(msg.event, msg.data)
        return
    }
  }

  request<T>(method: string, params: unknown, timeoutMs = 30_000): Promise<T> {
    const id = this.nextId++
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        reject(new AppError('broker_timeout', `broker ${this.brokerId} did not answer ${method} within ${timeoutMs / 1000}s`))
      }, timeoutMs)
      this.pending.set(id, {resolve: resolve as (v: unknown) => void, reject, timer})
      try {
        this.send({t: 'req', id, method, params})
      } catch (err) {
        clearTimeout(timer)
        this.pending.delete(id)
        reject(err)
      }
    })
  }

  async openStream(method: string, params: unknown, timeoutMs = STREAM_OPEN_TIMEOUT_MS): Promise<TunnelStream> {
    const sid = this.nextId++
    const state = this.streams.open(sid)
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        // Tell the broker too, so a stream that opens late is closed rather than left running.
        if (this.open) this.send({t: 'close', sid})
        reject(new AppError('broker_timeout', `broker ${this.brokerId} did not open ${method} in time`))
      }, timeoutMs)
      this.opening.set(sid, {
        resolve: () => (clearTimeout(timer), resolve()),
        reject: (e) => (clearTimeout(timer), reject(e)),
      })
      this.send({t: 'open', sid, method, params})
    }).catch((err) => {
      this.opening.delete(sid)
      this.streams.end(sid)
      throw err
    })
    return {
      onData: (l) => state.onData(l),
      onClose: (l) => state.onClose(l),
      write: (data) => {
        if (!state.closed && this.open) this.send({t: 'data', sid, d: data.toString('base64')})
      },
      resize: (cols, rows) => {
        if (!state.closed && this.open) this.send({t: 'ctl', sid, resize: {cols, rows}})
      },
      close: () => {
        if (this.streams.end(sid) && this.open) this.send({t: 'close', sid})
      },
    }
  }

  /**
   * Opens a byte stream with flow control (tunnel-duplex.ts); resolves once the broker answers
   * `opened`, rejects with its refusal (`brokerCode`).
   */
  async openDuplex(method: string, params: unknown, timeoutMs = STREAM_OPEN_TIMEOUT_MS): Promise<TunnelDuplex> {
    const sid = this.nextId++
    const duplex = this.duplexes.add(
      new TunnelDuplex(sid, {
        data: (frame) => this.open && this.ws.send(frame, {binary: true}),
        ack: (n) => this.open && this.send({t: 'ack', sid, n}),
        close: (error) => this.open && this.send({t: 'close', sid, ...(error && {error})}),
      }),
    )
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        duplex.destroy()
        reject(new AppError('broker_timeout', `broker ${this.brokerId} did not open ${method} in time`))
      }, timeoutMs)
      this.opening.set(sid, {
        resolve: () => (clearTimeout(timer), resolve()),
        reject: (e) => (clearTimeout(timer), reject(e)),
      })
      this.send({t: 'open', sid, method, params, flow: true})
    }).catch((err) => {
      this.opening.delete(sid)
      this.duplexes.closed(sid)
      throw err
    })
    return duplex
  }

  close(code = 1000, reason = '') {
    clearInterval(this.pinger)
    this.ws.close(code, reason)
    this.failAll()
  }

  private failAll() {
    clearInterval(this.pinger)
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer)
      // The request was sent: whether the broker acted on it is unknown.
      p.reject(new AppError('broker_unavailable', `broker ${this.brokerId} disconnected`, {sent: true}))
      this.pending.delete(id)
    }
    for (const waiting of this.opening.values()) waiting.reject(new AppError('broker_unavailable', `broker ${this.brokerId} disconnected`))
    this.opening.clear()
    this.streams.endAll({code: 'broker_unavailable', message: 'broker disconnected'})
    this.duplexes.endAll({code: 'broker_unavailable', message: 'broker disconnected'})
  }
}
