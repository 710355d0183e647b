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
}
