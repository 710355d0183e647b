import type {Kysely} from 'kysely'
import type {Database} from '../../src/store/schema.js'
import {POLICY_V1} from '../../src/domain/delegation/policy-v1.js'
import {MAX_WALK_DEPTH, type ExclusionReason, type Outcome} from '../../src/domain/delegation/types.js'
import {agentRow, FIXTURE_TIME, idFrom, prng, type AgentRow} from './legacy-fixture.js'

/** Planted case (an outcome, an exclusion reason, or `first>second` for rule order) → agent ID. */
export type Planted = Record<string, string>

/** The verdict the planner must give each planted case. */
export const EXPECTED: Record<string, [Outcome, ExclusionReason | null]> = {
  adopt: ['adopt', null],
  recognized: ['recognized', null],
  recognized_above_policy: ['recognized_above_policy', null],
  recorded: ['recorded', null],
  missing_edge: ['excluded', 'missing_edge'],
  duplicate_active_edges: ['excluded', 'duplicate_active_edges'],
  scope_mismatch: ['excluded', 'scope_mismatch'],
  'scope_mismatch:parent': ['excluded', 'scope_mismatch'],
  unsupported_delegator_type: ['excluded', 'unsupported_delegator_type'],
  no_principal_root: ['excluded', 'no_principal_root'],
  root_missing: ['excluded', 'root_missing'],
  root_inactive: ['excluded', 'root_inactive'],
  parent_missing: ['excluded', 'parent_missing'],
  parent_deleted: ['excluded', 'parent_deleted'],
  ancestor_excluded: ['excluded', 'ancestor_excluded'],
  cycle: ['excluded', 'cycle'],
  too_deep: ['excluded', 'too_deep'],
  delegator_ancestry_mismatch: ['excluded', 'delegator_ancestry_mismatch'],
  unknown_provenance_version: ['excluded', 'unknown_provenance_version'],
  malformed_provenance: ['excluded', 'malformed_provenance'],
  malformed_ceiling: ['excluded', 'malformed_ceiling'],
  role_none: ['excluded', 'role_none'],
  unknown_role: ['excluded', 'unknown_role'],
  unreadable_agent_config: ['excluded', 'unreadable_agent_config'],
  // Two rules fail at once; the first in rule order is the reason.
  'root_inactive>role_none': ['excluded', 'root_inactive'],
  'malformed_provenance>unknown_role': ['excluded', 'malformed_provenance'],
  'no_principal_root>unreadable_agent_config': ['excluded', 'no_principal_root'],
  'ancestor_excluded>delegator_ancestry_mismatch': ['excluded', 'ancestor_excluded'],
}

type EdgePatch = {agent: string; set?: Record<string, unknown>; duplicate?: boolean}

export interface AnomalyPlan {
  users: Record<string, unknown>[]
  projects: Record<string, unknown>[]
  agents: AgentRow[]
  planted: Planted
  /** Odd edge rows, written after the backfill. */
  patches: EdgePatch[]
}

/**
 * Anomalies in two projects of their own (so regular agents stay clean): one agent per case in
 * EXPECTED. Most come from creators the backfill turns into the odd edge (a suspended or
 * missing user, a broker, no creator, a cycle, a deep chain); the rest patch the backfilled row.
 */
export function anomalyPlan(o: {users: string[]; seed: number}): AnomalyPlan {
  const rand = prng(o.seed ^ 0xa11)
  const [home, elsewhere, suspended] = [idFrom(rand), idFrom(rand), idFrom(rand)]
  const u0 = {kind: 'user', id: o.users[0]}
  const agents: AgentRow[] = []
  const planted: Planted = {}
  const patches: EdgePatch[] = []
  const add = (key: string, a: {role?: string; creator?: {kind: string; id: string}; projectId?: string; deleted?: boolean; config?: string}, patch?: Omit<EdgePatch, 'agent'>) => {
    const id = idFrom(rand)
    agents.push(agentRow({id, projectId: a.projectId ?? home, name: `anomaly-${agents.length}`, role: a.role ?? 'full', creator: a.creator ?? u0, deleted: a.deleted, config: a.config}))
    if (!key.startsWith('.')) planted[key] = id
    if (patch) patches.push({agent: id, ...patch})
    return id
  }
  const adopted = (ceiling: readonly string[]) => ({provenance_version: 1, source_credential_kind: 'system_migration', ceiling: JSON.stringify([...ceiling]), ceiling_policy: 'v1', ceiling_project_id: home})

  add('adopt', {})
  add('recognized', {role: 'readonly'}, {set: adopted(POLICY_V1.readonly)})
  add('recognized_above_policy', {role: 'readonly'}, {set: adopted([...POLICY_V1.readonly, 'secret.use'])})
  add('recorded', {}, {set: {provenance_version: 1, source_credential_kind: 'session', ceiling: '["project.read"]'}})
  add('missing_edge', {}, {set: {active: 0}})
  add('duplicate_active_edges', {}, {duplicate: true})
  add('scope_mismatch', {}, {set: {project_id: elsewhere}})
  const foreign = add('.foreign-parent', {projectId: elsewhere})
  add('scope_mismatch:parent', {creator: {kind: 'agent', id: foreign}})
  add('unsupported_delegator_type', {creator: {kind: 'broker', id: idFrom(rand)}})
  add('no_principal_root', {creator: {kind: 'user', id: ''}})
  add('root_missing', {creator: {kind: 'user', id: idFrom(rand)}})
  const inactive = add('root_inactive', {creator: {kind: 'user', id: suspended}})
  add('parent_missing', {creator: {kind: 'agent', id: idFrom(rand)}})
  const deleted = add('.deleted-parent', {deleted: true})
  add('parent_deleted', {creator: {kind: 'agent', id: deleted}})
  add('ancestor_excluded', {creator: {kind: 'agent', id: inactive}})
  // A loop: a's creator is b and b's creator is a.
  const [a, b] = [idFrom(rand), idFrom(rand)]
  agents.push(agentRow({id: a, projectId: home, name: 'anomaly-cycle-a', role: 'full', creator: {kind: 'agent', id: b}}))
  agents.push(agentRow({id: b, projectId: home, name: 'anomaly-cycle-b', role: 'full', creator: {kind: 'agent', id: a}}))
  planted.cycle = a
  // A straight chain one hop longer than the walk examines: its last hop is too deep.
  let parent = u0
  for (let i = 0; i <= MAX_WALK_DEPTH; i++) parent = {kind: 'agent', id: add(i === MAX_WALK_DEPTH ? 'too_deep' : '.deep', {creator: parent})}
  add('delegator_ancestry_mismatch', {}, {set: {delegator_id: o.users[1]}})
  add('unknown_provenance_version', {}, {set: {provenance_version: 2}})
  add('malformed_provenance', {}, {set: {source_credential_kind: 'session'}})
  add('malformed_ceiling', {}, {set: {provenance_version: 1, source_credential_kind: 'session', ceiling: 'not json'}})
  add('role_none', {role: 'none'})
  add('unknown_role', {role: 'superuser'})
  add('unreadable_agent_config', {config: '{"applied": {broken'})
  add('root_inactive>role_none', {role: 'none', creator: {kind: 'user', id: suspended}})
  add('malformed_provenance>unknown_role', {role: 'superuser'}, {set: {source_credential_kind: 'session'}})
  add('no_principal_root>unreadable_agent_config', {creator: {kind: 'user', id: ''}, config: 'null'})
  // Created by a user, but the edge names the excluded agent above: two rules fail.
  add('ancestor_excluded>delegator_ancestry_mismatch', {}, {set: {delegator_kind: 'agent', delegator_id: inactive}})

  const t = FIXTURE_TIME
  return {
    users: [{id: suspended, email: 'suspended@fixture.test', display_name: 'suspended', status: 'suspended', system_admin: 0, oidc_issuer: null, oidc_subject: null, created_at: t, updated_at: t, last_login_at: null}],
    projects: [home, elsewhere].map((id, i) => ({id, name: `anomalies-${i}`, slug: `anomalies-${i}`, git_remote: null, description: '', default_broker_id: null, created_by: o.users[0], created_at: t, updated_at: t})),
    agents,
    planted,
    patches,
  }
}

/** Writes the odd edge rows over what the backfill wrote. */
export async function applyPatches(db: Kysely<Database>, patches: EdgePatch[], seed: number): Promise<void> {
  const rand = prng(seed ^ 0xd0b)
  await db.transaction().execute(async (tx) => {
    for (const p of patches) {
      if (p.set) await tx.updateTable('delegation_edges').set(p.set as never).where('delegate_agent_id', '=', p.agent).where('active', '=', 1).execute()
      if (p.duplicate) {
        const e = await tx.selectFrom('delegation_edges').selectAll().where('delegate_agent_id', '=', p.agent).executeTakeFirstOrThrow()
        await tx.insertInto('delegation_edges').values({...e, id: idFrom(rand)}).execute()
      }
    }
  })
}
