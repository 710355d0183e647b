import type {Kysely} from 'kysely'
import pino from 'pino'
import type {Database} from '../../src/store/schema.js'
import {createDb, type Driver} from '../../src/store/create-db.js'
import {migrate} from '../../src/store/migrate.js'
import {openStore} from '../../src/store/store.js'
import {backfillDelegationEdges} from '../../src/domain/delegation/backfill.js'
import {scopesForRole} from '../../src/domain/agents/scopes.js'
import {resolveAgentDefaults} from '../../src/domain/project-settings/resolve.js'
import {hashSecret, newSecret, TOKEN_PREFIX} from '../../src/domain/shared/secrets.js'
import {anomalyPlan, applyPatches, type Planted} from './legacy-anomalies.js'

/**
 * The legacy fixture: a database as a release from before provenance left it. Schema up to
 * migration 0008, users, projects with members, agents whose creators form chains, version-0
 * edges written by the real backfill (with its marker), and an agent token per live agent.
 * Everything but the token secrets is deterministic from the seed.
 */
export interface LegacyFixtureOptions {
  driver: Driver
  /** SQLite file or PostgreSQL URL (`?options=-c search_path=<schema>` selects a schema). */
  url: string
  agents: number
  /** Longest chain, in hops: agents sit at depths 0 .. depth-1 (0 = created by a user). */
  depth: number
  seed: number
  anomalies?: boolean
  /** Mint agent tokens (default true; the planner bench needs none). */
  tokens?: boolean
}

export interface LegacyFixture {
  /** Agent ID → agent token, for every live agent (CONTRACT.md "Test fixtures"). */
  tokens: Record<string, string>
  /** With anomalies: each case of EXPECTED (legacy-anomalies.ts) → its agent ID. */
  planted: Planted
  users: string[]
  projects: string[]
  agents: number
}

export const LEGACY_SCHEMA = '0008-delegation-edges'
/** Fixed creation time: the fixture is reproducible, and no timestamp matters to adoption. */
export const FIXTURE_TIME = '2025-06-01T00:00:00.000Z'
/** Agent tokens outlive a day so a fixture built once serves a whole test session. */
const TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000
const BATCH = 500

/** mulberry32: a small seeded PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A UUID-shaped ID from the PRNG (deterministic per seed). */
export function idFrom(rand: () => number): string {
  const h = Array.from({length: 32}, () => Math.floor(rand() * 16).toString(16)).join('')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`
}

export interface AgentRow {
  id: string
  project_id: string
  name: string
  broker_id: null
  phase: string
  activity: null
  detail: string
  harness_config: string
  template: null
  task: null
  role: string
  runtime: null
  runtime_ref: null
  config: string
  error: null
  created_by_kind: string
  created_by_id: string
  created_at: string
  updated_at: string
  last_heartbeat_at: null
  deleted_at: string | null
  message_mode: string
}

/** An agent row as the release before provenance wrote it (config with the applied defaults). */
export function agentRow(a: {id: string; projectId: string; name: string; role: string; creator: {kind: string; id: string}; phase?: string; deleted?: boolean; assignAccount?: string; config?: string}): AgentRow {
  // Every applied default, resolved by the real resolver as agent creation stores them.
  const request = {defaultAgentRole: a.role, defaultHarnessConfig: 'claude', ...(a.assignAccount && {defaultCloudIdentityMode: 'Assign', defaultCloudIdentityServiceAccountId: a.assignAccount})}
  const {defaultRuntimeBroker: _broker, ...applied} = resolveAgentDefaults({request, project: {}, hub: {}})
  return {
    id: a.id,
    project_id: a.projectId,
    name: a.name,
    broker_id: null,
    phase: a.deleted ? 'stopped' : (a.phase ?? 'running'),
    activity: null,
    detail: '',
    harness_config: 'claude',
    template: null,
    task: null,
    role: a.role,
    runtime: null,
    runtime_ref: null,
    config: a.config ?? JSON.stringify({applied}),
    error: null,
    created_by_kind: a.creator.kind,
    created_by_id: a.creator.id,
    created_at: FIXTURE_TIME,
    updated_at: FIXTURE_TIME,
    last_heartbeat_at: null,
    deleted_at: a.deleted ? FIXTURE_TIME : null,
    message_mode: 'open',
  }
}

const ROLES = ['full', 'full', 'baseline', 'readonly']

/**
 * The regular population: per project, agents either start a chain (a user creates them) or
 * are created by a recent `full` agent of the same project that is not yet at the deepest
 * level. The first `depth` agents form one straight chain, so the deepest level always exists.
 * Some agents are stopped (still live), a few deleted (never parents), some hold an
 * assign-mode service account.
 */
export function population(o: {agents: number; depth: number; seed: number; users: string[]; projects: string[]}): AgentRow[] {
  const rand = prng(o.seed)
  const rows: AgentRow[] = []
  const open = new Map<string, {id: string; depth: number}[]>(o.projects.map((p) => [p, []]))
  for (let i = 0; i < o.agents; i++) {
    const projectId = i < o.depth ? o.projects[0] : o.projects[Math.floor(rand() * o.projects.length)]
    const candidates = open.get(projectId)!
    const chain = i > 0 && i < o.depth
    const root = !chain && (candidates.length === 0 || rand() < 0.25)
    const parent = chain ? candidates[candidates.length - 1] : root ? null : candidates[candidates.length - 1 - Math.floor(rand() * Math.min(64, candidates.length))]
    const depth = parent ? parent.depth + 1 : 0
    const role = chain || i === 0 ? 'full' : ROLES[Math.floor(rand() * ROLES.length)]
    const deleted = !chain && i > 0 && rand() < 0.01
    const id = idFrom(rand)
    rows.push(
      agentRow({
        id,
        projectId,
        name: `agent-${i}`,
        role,
        creator: parent ? {kind: 'agent', id: parent.id} : {kind: 'user', id: o.users[Math.floor(rand() * o.users.length)]},
        phase: rand() < 0.3 ? 'stopped' : 'running',
        deleted,
        assignAccount: rand() < 0.05 ? `sa-${i}@fixture.test` : undefined,
      }),
    )
    if (!deleted && role === 'full' && depth < o.depth - 1) {
      candidates.push({id, depth})
      if (candidates.length > 4096) candidates.splice(0, 2048)
    }
  }
  return rows
}

/** Inserts rows in batches that stay under both databases' bound-parameter limits. */
export async function insertBatches(db: {insertInto: (t: never) => {values: (v: never) => {execute: () => Promise<unknown>}}}, table: string, rows: object[]): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) await db.insertInto(table as never).values(rows.slice(i, i + BATCH) as never).execute()
}

/** Builds the legacy fixture into an empty database (or schema). */
export async function buildLegacyFixture(o: LegacyFixtureOptions): Promise<LegacyFixture> {
  const rand = prng(o.seed ^ 0x5eed)
  const userCount = Math.max(3, Math.min(100, Math.ceil(o.agents / 1000)))
  const projectCount = Math.max(2, Math.min(50, Math.ceil(o.agents / 5000)))
  const users = Array.from({length: userCount}, () => idFrom(rand))
  const projects = Array.from({length: projectCount}, () => idFrom(rand))
  const handle = await createDb({driver: o.driver, url: o.url})
  try {
    await migrate(handle, {upTo: LEGACY_SCHEMA})
    const db = handle.db
    const rows = population({agents: o.agents, depth: o.depth, seed: o.seed, users, projects})
    const odd = o.anomalies ? anomalyPlan({users, seed: o.seed}) : null
    await db.transaction().execute(async (tx) => {
      const t = FIXTURE_TIME
      const userRows = users.map((id, i) => ({id, email: `user${i}@fixture.test`, display_name: `user${i}`, status: 'active', system_admin: 0, oidc_issuer: null, oidc_subject: null, created_at: t, updated_at: t, last_login_at: null}))
      await insertBatches(tx as never, 'users', [...userRows, ...(odd?.users ?? [])])
      const projectRows = projects.map((id, i) => ({id, name: `project-${i}`, slug: `project-${i}`, git_remote: null, description: '', default_broker_id: null, created_by: users[0], created_at: t, updated_at: t}))
      const allProjects = [...projectRows, ...(odd?.projects ?? [])]
      await insertBatches(tx as never, 'projects', allProjects)
      await insertBatches(tx as never, 'project_members', allProjects.flatMap((p) => users.map((u, i) => ({project_id: p.id, user_id: u, role: i === 0 ? 'owner' : 'member', created_at: t}))))
      await insertBatches(tx as never, 'agents', [...rows, ...(odd?.agents ?? [])])
    })
    // The real backfill writes the version-0 edges and its marker, as the older release did.
    const store = await openStore({driver: o.driver, url: o.url, poolSize: 2})
    try {
      await backfillDelegationEdges(store, FIXTURE_TIME, pino({level: 'silent'}))
    } finally {
      await store.close()
    }
    if (odd) await applyPatches(db, odd.patches, o.seed)
    const tokens = o.tokens === false ? {} : await mintTokens(db, [...rows, ...(odd?.agents ?? [])])
    return {tokens, planted: odd?.planted ?? {}, users, projects: allProjectIds(projects, odd), agents: rows.length + (odd?.agents.length ?? 0)}
  } finally {
    await handle.close()
  }
}

const allProjectIds = (projects: string[], odd: {projects: Record<string, unknown>[]} | null) => [...projects, ...(odd?.projects.map((p) => String(p.id)) ?? [])]

/** True when a Hub can read the agent's config (unreadable-config anomalies get no token). */
function readable(config: string): boolean {
  try {
    const v: unknown = JSON.parse(config)
    return !!v && typeof v === 'object'
  } catch {
    return false
  }
}

/** One agent token per live agent, stored hashed as the agent-token service mints them. */
async function mintTokens(db: Kysely<Database>, rows: AgentRow[]): Promise<Record<string, string>> {
  const tokens: Record<string, string> = {}
  const now = new Date()
  const expires = new Date(now.getTime() + TOKEN_TTL_MS).toISOString()
  const out = rows
    .filter((r) => r.deleted_at === null && readable(r.config))
    .map((r, i) => {
      const token = newSecret(TOKEN_PREFIX.agent)
      tokens[r.id] = token
      return {id: `fixture-token-${i}-${r.id}`, agent_id: r.id, token_hash: hashSecret(token), scopes: JSON.stringify(scopesForRole(r.role)), created_at: now.toISOString(), expires_at: expires, revoked_at: null}
    })
  await db.transaction().execute((tx) => insertBatches(tx as never, 'agent_tokens', out))
  return tokens
}
