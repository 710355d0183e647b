/**
 * Messages on the broker tunnel: one WebSocket the broker opens to the Hub
 * (`/api/v1/runtime-brokers/connect`), over which the Hub commands the broker, so a broker
 * behind NAT works. JSON text frames; stream payloads are base64.
 *
 * - Hub -> broker request `req`, answered by `res` with the same id.
 * - Streams (logs, attach): Hub sends `open`; either side sends `data`, `close`; Hub sends `ctl`
 *   (resize). The broker answers `open` with `opened` or `close` carrying an error.
 * - Broker -> Hub events `evt` (hello, agent status, liveness).
 * - Byte streams with flow control (`open` with `flow: true`: an agent's port): data as binary
 *   messages and `ack` both ways (tunnel-duplex.ts).
 */
export type TunnelMessage =
  | {t: 'req'; id: number; method: string; params: unknown}
  | {t: 'res'; id: number; ok: true; result: unknown}
  | {t: 'res'; id: number; ok: false; error: {code: string; message: string; details?: Record<string, unknown>}}
  | {t: 'open'; sid: number; method: string; params: unknown; flow?: boolean}
  | {t: 'opened'; sid: number}
  | {t: 'data'; sid: number; d: string}
  | {t: 'ctl'; sid: number; resize?: {cols: number; rows: number}}
  | {t: 'close'; sid: number; error?: {code: string; message: string}}
  | {t: 'ack'; sid: number; n: number}
  | {t: 'evt'; event: string; data: unknown}

/** What a broker can do; the Hub refuses operations a broker does not advertise. */
export const BROKER_CAPABILITIES = ['agents', 'logs', 'attach', 'keys', 'messages', 'ports'] as const

/** Events a broker sends. */
export interface HelloEvent {
  version: string
  capabilities: string[]
  runtimes: string[]
  /** Agents the broker is running now: the Hub reconciles them. */
  agents: string[]
  /** Agents whose workspace (worktree, HOME) the broker still has: those of deleted agents are removed. */
  workspaces?: string[]
}

export interface AgentStatusEvent {
  agentId: string
  phase: string
  /** `limits_exceeded` when the broker stopped the agent at its `max_duration`. */
  activity?: string
  detail?: string
  error?: string
  /** Base64 of the agent's output, sent when it ends, for the Hub to keep. */
  log?: string
}

export interface AliveEvent {
  agentIds: string[]
}

export const TUNNEL_PATH = '/api/v1/runtime-brokers/connect'

/** How long the Hub waits for a broker to open a stream or byte stream (then 504 `broker_timeout`). */
export const STREAM_OPEN_TIMEOUT_MS = 15_000
