import {AppError} from '../../api/app-error.js'
import type {Store} from '../../store/store.js'

/** Ports per agent (`SVC_PORTS` is `<first>-<first + 9>`). */
export const PORT_BLOCK_SIZE = 10
/**
 * Where blocks are taken from on each broker: 20000-29999, 1000 blocks. Below the Linux
 * ephemeral range (32768 up), so a block is not handed out by the kernel for outgoing
 * connections meanwhile, and above the usual dev-server defaults (3000, 5173, 8080), which an
 * agent may still use: its network is its own.
 */
export const PORT_RANGE = {from: 20_000, to: 29_999}

const STARTS = Array.from({length: Math.floor((PORT_RANGE.to - PORT_RANGE.from + 1) / PORT_BLOCK_SIZE)}, (_, i) => PORT_RANGE.from + i * PORT_BLOCK_SIZE)

/**
 * The agent's block on its broker (claimed at its first dispatch, kept across stops, restarts
 * and Hub or broker restarts, released when it is deleted) as the variables of its environment.
 * Throws `quota_exceeded` when the broker has no free block.
 */
export async function agentPortEnv(store: Store, agent: {id: string; brokerId: string | null}, now: string): Promise<{SVC_PORTS: string; PORT: string}> {
  if (!agent.brokerId) throw new AppError('broker_unavailable', 'the agent has no broker')
  const block = await store.agentPorts.claim(agent.id, agent.brokerId, STARTS, now)
  if (!block) throw new AppError('quota_exceeded', `every block of ${PORT_BLOCK_SIZE} ports (${PORT_RANGE.from}-${PORT_RANGE.to}) on this broker is held by an agent: delete agents you no longer need`, {quota: 'agent_ports'})
  return {SVC_PORTS: `${block.first}-${block.first + PORT_BLOCK_SIZE - 1}`, PORT: String(block.first)}
}
