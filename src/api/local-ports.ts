/**
 * Brokers running in this process (the workstation Hub's co-located broker) and how they connect
 * to their agents' ports, by broker ID. The Hub uses one for a preview or `svc agent forward` of
 * an agent on a broker whose tunnel it holds, and gets the broker's own connection to the port
 * (a socket) instead of a byte stream through the tunnel's WebSocket over loopback: that hop cost
 * two loopback writes, a frame copy and a parse per chunk, in the same process, on every byte.
 * Only code in this process registers here; what a connection may reach is still decided by the
 * broker (ports/port-requests.ts), after the Hub authorized the caller.
 */
import type {Duplex} from 'node:stream'
import {AppError} from './app-error.js'

/** Connects to an agent's port as the broker's `agent.port` stream would; rejects with its refusal (`code`). */
export type LocalPortOpener = (method: string, params: unknown) => Promise<Duplex>

/** As long as the tunnel waits for a broker to open a byte stream (broker-connection.ts). */
export const LOCAL_OPEN_TIMEOUT_MS = 15_000

const local = new Map<string, LocalPortOpener>()

/** Registers the in-process broker `brokerId`; the returned function removes it (only if still this one). */
export function registerLocalPorts(brokerId: string, opener: LocalPortOpener): () => void {
  local.set(brokerId, opener)
  return () => {
    if (local.get(brokerId) === opener) local.delete(brokerId)
  }
}

/**
 * The in-process broker's opener, bounded as the tunnel's is: past `timeoutMs` it rejects with
 * `broker_timeout` (504), so a preview never waits forever on a runtime or forwarder that hangs,
 * and a connection that opens after that is closed, not left to the agent's server.
 */
export function localPortOpener(brokerId: string, timeoutMs = LOCAL_OPEN_TIMEOUT_MS): LocalPortOpener | undefined {
  const open = local.get(brokerId)
  if (!open) return undefined
  return (method, params) =>
    new Promise<Duplex>((resolve, reject) => {
      let late = false
      const timer = setTimeout(() => {
        late = true
        reject(new AppError('broker_timeout', `broker ${brokerId} did not open ${method} in time`))
      }, timeoutMs)
      open(method, params).then(
        (stream) => {
          if (late) return void stream.destroy()
          clearTimeout(timer)
          resolve(stream)
        },
        (err: unknown) => {
          clearTimeout(timer)
          reject(err)
        },
      )
    })
}
