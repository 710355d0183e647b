import type {Principal} from './context.js'
import type {Decision} from './decide.js'

/**
 * Live attach authority (CONTRACT.md "Isolation", spec Authentication 7): what an agent may do
 * to another agent's terminal and output. Only these actions are bounded; reading an agent's
 * record, messages (the target's message mode) and the rest keep their own rules.
 */
export const ATTACH_ACTIONS = ['keys', 'attach', 'logs'] as const
export type AttachAction = (typeof ATTACH_ACTIONS)[number]

/** The target as the decision needs it: its project and the agents that created it, nearest first. */
export interface AgentLineage {
  id: string
  projectId: string
  /** IDs of its creating agent, that agent's creating agent, ... up to the first made by a user. */
  ancestors: readonly string[]
}

/**
 * Pure decision: may `principal` do `action` to `target` as far as reach goes? An agent reaches
 * only itself and its descendants (agents it created, transitively); any other agent answers
 * 404 as if it did not exist. Users and brokers are not bounded by reach: their project roles,
 * ownership and hosting decide (access.ts, keys-service.ts), unchanged. Cross-project rules run
 * before this one; a target in another project is denied here too, so nothing slips through
 * when a caller forgets them.
 */
export function decideAttachReach(principal: Principal, action: AttachAction, target: AgentLineage): Decision {
  if (principal.kind !== 'agent') return {allowed: true, reason: 'not_an_agent'}
  if (target.projectId !== principal.projectId) return {allowed: false, reason: 'other_project', details: {action}}
  if (target.id === principal.id) return {allowed: true, reason: 'self'}
  if (target.ancestors.includes(principal.id)) return {allowed: true, reason: 'descendant', details: {depth: target.ancestors.indexOf(principal.id) + 1}}
  return {allowed: false, reason: 'not_descendant', details: {action}}
}
