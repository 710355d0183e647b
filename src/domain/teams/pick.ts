/**
 * Teams, attempts: keep one attempt (CONTRACT.md "Teams", `svc agent pick`). One domain step for
 * the CLI and the web's Pick button: the caller's own merge of the attempt (a person's lands it
 * on its base branch in the checkout; a parent's takes its child), then every other attempt of
 * its group is stopped and deleted with the normal delete, which keeps its branch. A refused
 * merge (conflict, dirty checkout) answers that refusal and deletes nothing.
 */
import {AppError} from '../../api/app-error.js'
import type {MergeResultDto} from '../../api/dto.js'
import type {CallContext} from '../authz/context.js'
import type {AgentView} from '../agents/agent-state.js'

export interface PickResult {
  picked: string
  merge: MergeResultDto
  /** The other attempts, stopped and deleted (their branches are kept in the checkout). */
  deleted: string[]
}

type Agents = {
  get(ctx: CallContext, ref: string, projectRef?: string): Promise<AgentView>
  list(ctx: CallContext, filter: {projectId?: string; group?: string}): Promise<AgentView[]>
  delete(ctx: CallContext, ref: string, projectRef?: string): Promise<unknown>
}
type Review = {merge(ctx: CallContext, ref: string, input: {strategy?: 'merge' | 'squash'}, projectRef?: string): Promise<MergeResultDto>}

export async function pickAttempt(s: {agents: Agents; review: Review}, ctx: CallContext, ref: string, input: {strategy?: 'merge' | 'squash'}, projectRef?: string): Promise<PickResult> {
  const agent = await s.agents.get(ctx, ref, projectRef)
  if (!agent.group) throw new AppError('conflict', `agent ${agent.name} is not an attempt (it was not created with --attempts)`)
  const merge = await s.review.merge(ctx, agent.id, {strategy: input.strategy ?? 'merge'})
  const deleted: string[] = []
  for (const other of await s.agents.list(ctx, {projectId: agent.projectId, group: agent.group})) {
    if (other.id === agent.id) continue
    await s.agents.delete(ctx, other.id)
    deleted.push(other.name)
  }
  return {picked: agent.name, merge, deleted}
}
