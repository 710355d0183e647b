import type {Duplex} from 'node:stream'

/**
 * The port through which the domain commands brokers. The Hub implements it with the tunnel
 * registry (src/server/tunnel); the domain never sees a WebSocket.
 */
export interface TunnelStream {
  onData(listener: (chunk: Buffer) => void): void
  onClose(listener: (error?: {code: string; message: string}) => void): void
  write(data: Buffer): void
  resize(cols: number, rows: number): void
  close(): void
}

export interface BrokerGateway {
  isConnected(brokerId: string): boolean
  /** Capabilities the broker advertised in its hello; null when not connected. */
  capabilities(brokerId: string): string[] | null
  /** One request over the tunnel; rejects with AppError on a broker error or timeout. */
  request<T>(brokerId: string, method: string, params: unknown, timeoutMs?: number): Promise<T>
  openStream(brokerId: string, method: string, params: unknown): Promise<TunnelStream>
  /**
   * A byte stream with flow control (an agent's port: previews, `svc agent forward`); rejects
   * with the broker's refusal (`broker_error`, `details.brokerCode`) or `broker_timeout`.
   */
  openDuplex(brokerId: string, method: string, params: unknown): Promise<Duplex>
}

/**
 * Brokers whose tunnel another replica of the deployment holds: their capabilities (null when
 * no live replica holds the broker), and requests and streams sent through that replica.
 */
export interface RemoteBrokers {
  capabilities(brokerId: string): string[] | null
  request<T>(brokerId: string, method: string, params: unknown, timeoutMs?: number): Promise<T>
  openStream(brokerId: string, method: string, params: unknown): Promise<TunnelStream>
  openDuplex(brokerId: string, method: string, params: unknown): Promise<Duplex>
}

/**
 * The one seam through which every agent operation reaches a broker: this replica's own tunnel
 * when it holds the broker, else the replica that does (any replica serves any agent). A broker
 * neither holds answers as the local gateway does: 503 `broker_unavailable`.
 */
export function forwardingGateway(local: BrokerGateway, remote: RemoteBrokers): BrokerGateway {
  const viaRemote = (brokerId: string) => !local.isConnected(brokerId) && remote.capabilities(brokerId) !== null
  return {
    isConnected: (brokerId) => local.isConnected(brokerId) || remote.capabilities(brokerId) !== null,
    capabilities: (brokerId) => local.capabilities(brokerId) ?? remote.capabilities(brokerId),
    request: (brokerId, method, params, timeoutMs) => (viaRemote(brokerId) ? remote : local).request(brokerId, method, params, timeoutMs),
    openStream: (brokerId, method, params) => (viaRemote(brokerId) ? remote : local).openStream(brokerId, method, params),
    openDuplex: (brokerId, method, params) => (viaRemote(brokerId) ? remote : local).openDuplex(brokerId, method, params),
  }
}
