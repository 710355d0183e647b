/**
 * Teams: who leads a new agent. An agent created with an agent's credential is that agent's
 * child; a person names a parent with `parentId` (`svc agent create --parent`). A child never
 * gets a role above its parent's (spec V1 rule 3, for the person's path too: the walk already
 * bounds an agent creating with its own credential).
 */
import {AppError, notFound} from '../../api/app-error.js'
import type {AgentRecord} from '../../store/repositories/agents.js'
import type {AgentAccess} from '../agents/access.js'
import type {CallContext} from '../authz/context.js'

const ROLE_RANK: Record<string, number> = {none: 0, readonly: 1, baseline: 2, full: 3}

export async function resolveParent(access: AgentAccess, ctx: CallContext, projectId: string, parentRef: string | undefined): Promise<AgentRecord | null> {
  const p = ctx.principal
  if (p.kind === 'agent') {
    const self = await access.resolve(p.id)
    if (!self) throw notFound('agent')
    if (parentRef && parentRef !== self.id && parentRef !== self.name) throw new AppError('forbidden', "an agent's new agents are its own children: parentId may only name the agent itself")
    if (self.projectId !== projectId) throw new AppError('forbidden', 'an agent creates agents only in its own project')
    return self
  }
  if (!parentRef) return null
  const parent = await access.resolve(parentRef, projectId)
  if (!parent || parent.projectId !== projectId) throw new AppError('validation_error', `parentId "${parentRef}" is not an agent of this project`, {fields: [{path: 'parentId', message: 'must name an agent of the project'}]})
  // Leading another agent's team changes that agent's work: the caller must manage it.
  await access.checkAgent(ctx, parent, 'agent.lifecycle')
  return parent
}

/** A child's role may not exceed its parent's: `forbidden` naming both. */
export function checkChildRole(role: string, parent: AgentRecord | null): void {
  if (!parent) return
  if ((ROLE_RANK[role] ?? 0) > (ROLE_RANK[parent.role] ?? 0)) {
    throw new AppError('forbidden', `a child's role (${role}) may not exceed its parent's (${parent.name}: ${parent.role})`, {role, parentRole: parent.role})
  }
}
