import type {WebSocket} from 'ws'
import {AppError} from '../../api/app-error.js'
import type {HelloEvent, TunnelMessage} from '../../api/tunnel-protocol.js'
import type {TunnelStream} from '../../domain/brokers/gateway.js'

type Pending = {resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout}

interface StreamState {
  data: Array<(chunk: Buffer) => void>
  close: Array<(error?: {code: string; message: string}) => void>
  opened: {resolve: () => void; reject: (e: Error) => void} | null
  closed: boolean
}

/**
 * One broker's tunnel, as seen by the Hub: requests correlated by ID with timeouts, multiplexed
 * streams, and events handed to `onEvent`. Closing the socket fails everything in flight.
 */
export class BrokerConnection {
  hello: HelloEvent | null = null
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private readonly streams = new Map<number, StreamState>()
  private alive = true
  private readonly pinger: NodeJS.Timeout

  constructor(
    readonly brokerId: string,
    private readonly ws: WebSocket,
    private readonly onEvent: (event: string, data: unknown) => void,
    pingMs = 20_000,
  ) {
    ws.on('message', (raw, isBinary) => {
      if (isBinary) return
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
        else p.reject(new AppError('broker_error', `broker: ${msg.error.message}`, {brokerCode: msg.error.code}))
        return
      }
      case 'opened': {
        const s = this.streams.get(msg.sid)
        s?.opened?.resolve()
        if (s) s.opened = null
        return
      }
      case 'data': {
        const s = this.streams.get(msg.sid)
        if (s) for (const l of s.data) l(Buffer.from(msg.d, 'base64'))
        return
      }
      case 'close': {
        const s = this.streams.get(msg.sid)
        if (!s) return
        this.streams.delete(msg.sid)
        s.closed = true
        if (s.opened) s.opened.reject(new AppError('broker_error', `broker: ${msg.error?.message ?? 'stream refused'}`, {brokerCode: msg.error?.code}))
        for (const l of s.close) l(msg.error)
        return
      }
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

  async openStream(method: string, params: unknown, timeoutMs = 15_000): Promise<TunnelStream> {
    const sid = this.nextId++
    const state: StreamState = {data: [], close: [], opened: null, closed: false}
    this.streams.set(sid, state)
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        // Tell the broker too, so a stream that opens late is closed rather than left running.
        if (this.open) this.send({t: 'close', sid})
        reject(new AppError('broker_timeout', `broker ${this.brokerId} did not open ${method} in time`))
      }, timeoutMs)
      state.opened = {
        resolve: () => (clearTimeout(timer), resolve()),
        reject: (e) => (clearTimeout(timer), reject(e)),
      }
      this.send({t: 'open', sid, method, params})
    }).catch((err) => {
      this.streams.delete(sid)
      throw err
    })
    return {
      onData: (l) => void state.data.push(l),
      onClose: (l) => (state.closed ? l() : void state.close.push(l)),
      write: (data) => {
        if (!state.closed && this.open) this.send({t: 'data', sid, d: data.toString('base64')})
      },
      resize: (cols, rows) => {
        if (!state.closed && this.open) this.send({t: 'ctl', sid, resize: {cols, rows}})
      },
      close: () => {
        if (state.closed) return
        state.closed = true
        this.streams.delete(sid)
        if (this.open) this.send({t: 'close', sid})
        for (const l of state.close) l()
      },
    }
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
    for (const [sid, s] of this.streams) {
      this.streams.delete(sid)
      s.closed = true
      s.opened?.reject(new AppError('broker_unavailable', `broker ${this.brokerId} disconnected`))
      for (const l of s.close) l({code: 'broker_unavailable', message: 'broker disconnected'})
    }
  }
}
