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

/** Connects to an agent's port as the broker's `agent.port` stream would; rejects with its refusal (`code`). */
export type LocalPortOpener = (method: string, params: unknown) => Promise<Duplex>

const local = new Map<string, LocalPortOpener>()

/** Registers the in-process broker `brokerId`; the returned function removes it (only if still this one). */
export function registerLocalPorts(brokerId: string, opener: LocalPortOpener): () => void {
  local.set(brokerId, opener)
  return () => {
    if (local.get(brokerId) === opener) local.delete(brokerId)
  }
}

/** The in-process broker's opener for `brokerId`, if one is registered (TunnelRegistry bounds it in time). */
export function localPortOpener(brokerId: string): LocalPortOpener | undefined {
  return local.get(brokerId)
}
