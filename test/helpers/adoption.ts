import {iso} from '../../src/domain/shared/clock.js'
import {newId} from '../../src/domain/shared/secrets.js'
import type {NewEdge} from '../../src/store/repositories/delegation-edges.js'
import type {TestHub} from './hub.js'

export const ADOPTION = '/api/v1/admin/delegation-adoption'

export interface LegacyAgentSpec {
  projectId: string
  /** The delegator: a user ID, or `{agent: id}` for a child of another agent. */
  by: string | {agent: string}
  role?: string
  name?: string
}

/**
 * Writes agents as a release before provenance left them: the agent row and one clean
 * version-0 edge naming its creator, straight through the repositories (fast, so a test can
 * build hundreds). Returns the agent IDs in order.
 */
export async function legacyAgents(hub: Pick<TestHub, 'store'>, specs: LegacyAgentSpec[]): Promise<string[]> {
  const now = iso(new Date())
  const edges: NewEdge[] = []
  const ids: string[] = []
  await hub.store.transaction(async (tx) => {
    for (const s of specs) {
      const id = newId()
      const delegator = typeof s.by === 'string' ? {kind: 'user' as const, id: s.by} : {kind: 'agent' as const, id: s.by.agent}
      await tx.agents.insert({
        id, projectId: s.projectId, name: s.name ?? `legacy-${id.slice(0, 8)}`, brokerId: null, phase: 'stopped', activity: null, detail: '', harnessConfig: 'shell',
        template: null, task: null, role: s.role ?? 'full', runtime: null, runtimeRef: null, config: {}, error: null, createdBy: delegator, createdAt: now, updatedAt: now,
      })
      edges.push({id: newId(), delegateAgentId: id, projectId: s.projectId, delegator, role: s.role ?? 'full', provenanceVersion: 0, sourceCredentialKind: null, ceiling: null, ceilingPolicy: null, ceilingProjectId: null, initiator: null, createdAt: now})
      ids.push(id)
    }
    await tx.delegationEdges.insertMany(edges)
  })
  return ids
}

/** A fresh project registered by the dev user (the Hub's system admin). */
export async function newProject(hub: TestHub, name: string): Promise<string> {
  const r = await hub.request('POST', '/api/v1/projects/register', {body: {name, gitRemote: `https://example.test/${name}-${newId().slice(0, 6)}.git`}})
  if (r.status >= 300) throw new Error(`project register: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.project.id as string
}

/** Preview then return the commit body for the same plan. */
export async function previewFor(hub: TestHub, body: Record<string, unknown>, token?: string) {
  const p = await hub.request('POST', `${ADOPTION}/previews`, {body, token})
  if (p.status !== 200) throw new Error(`preview: ${p.status} ${JSON.stringify(p.body)}`)
  return {preview: p.body, commitBody: {...body, planFingerprint: p.body.planFingerprint, planId: p.body.planId}}
}
