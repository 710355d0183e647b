import type {Duplex} from 'node:stream'
import type {WebSocket} from 'ws'
import {AppError} from '../../api/app-error.js'
import {localPortOpener} from '../../api/local-ports.js'
import {STREAM_OPEN_TIMEOUT_MS} from '../../api/tunnel-protocol.js'
import type {BrokerGateway, TunnelStream} from '../../domain/brokers/gateway.js'
import {BrokerConnection} from './broker-connection.js'

export type TunnelEventHandler = (brokerId: string, event: string, data: unknown) => void
export type DisconnectHandler = (brokerId: string) => void

/**
 * The brokers connected to this Hub process, keyed by broker ID; the Hub's implementation of
 * the BrokerGateway port. A broker that connects again replaces its old tunnel.
 */
export class TunnelRegistry implements BrokerGateway {
  private readonly conns = new Map<string, BrokerConnection>()
  onEvent: TunnelEventHandler = () => {}
  onDisconnect: DisconnectHandler = () => {}

  add(brokerId: string, ws: WebSocket): BrokerConnection {
    this.conns.get(brokerId)?.close(4000, 'replaced by a newer connection')
    const conn = new BrokerConnection(brokerId, ws, (event, data) => this.onEvent(brokerId, event, data))
    this.conns.set(brokerId, conn)
    ws.on('close', () => {
      if (this.conns.get(brokerId) === conn) {
        this.conns.delete(brokerId)
        this.onDisconnect(brokerId)
      }
    })
    return conn
  }

  private conn(brokerId: string): BrokerConnection {
    const c = this.conns.get(brokerId)
    if (!c || !c.open) throw new AppError('broker_unavailable', `broker ${brokerId} is not connected`, {sent: false})
    return c
  }

  isConnected(brokerId: string): boolean {
    const c = this.conns.get(brokerId)
    return !!c && c.open && c.hello !== null
  }

  capabilities(brokerId: string): string[] | null {
    return this.isConnected(brokerId) ? (this.conns.get(brokerId)!.hello?.capabilities ?? []) : null
  }

  request<T>(brokerId: string, method: string, params: unknown, timeoutMs?: number): Promise<T> {
    return this.conn(brokerId).request<T>(method, params, timeoutMs)
  }

  openStream(brokerId: string, method: string, params: unknown): Promise<TunnelStream> {
    return this.conn(brokerId).openStream(method, params)
  }

  openDuplex(brokerId: string, method: string, params: unknown, timeoutMs = STREAM_OPEN_TIMEOUT_MS): Promise<Duplex> {
    const conn = this.conn(brokerId)
    // The broker runs in this process (the co-located one): its own connection to the port,
    // with no WebSocket hop over loopback (local-ports.ts). Refused, or timed out, as through
    // the tunnel; a connection that opens too late is closed, not left to the agent's server.
    const local = localPortOpener(brokerId)
    if (!local) return conn.openDuplex(method, params, timeoutMs)
    return new Promise<Duplex>((resolve, reject) => {
      let late = false
      const timer = setTimeout(() => {
        late = true
        reject(new AppError('broker_timeout', `broker ${brokerId} did not open ${method} in time`))
      }, timeoutMs)
      local(method, params).then(
        (stream) => {
          if (late) return void stream.destroy()
          clearTimeout(timer)
          resolve(stream)
        },
        (err: Error & {code?: string}) => {
          clearTimeout(timer)
          reject(new AppError('broker_error', `broker: ${err.message}`, {brokerCode: err.code}))
        },
      )
    })
  }

  closeAll() {
    for (const c of this.conns.values()) c.close(1001, 'hub shutting down')
    this.conns.clear()
  }
}
