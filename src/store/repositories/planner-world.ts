import type {ArrayReader} from '../store.js'
import type {PlannerAgentFacts} from './agents.js'
import type {EdgeFacts} from './delegation-edges.js'

/**
 * The SQLite bulk read of the delegation planner's world (agents.listPlannerWorld): every agent
 * (deleted too) and every active edge, as value arrays visited row by row.
 *
 * Built for a full adoption preview of 100k agents, where making JS values is most of the cost
 * and every short-lived string feeds the collector while the world it builds survives. So
 * columns with few values come back from SQLite as small integers where the value is a frequent
 * one (below): no string is made for them, nor looked up to be interned. Any other value comes
 * back as its text (interned), so the codes only ever decide how a value travels, never what it
 * is. An adopted edge's ceiling project is its own project (answered as 0), and its ceiling one
 * of the few texts the previous read saw (passed as parameters, answered as their place): the
 * ceiling texts are ~0.5 KB each, 50 MB of strings per read of 100k adopted edges otherwise.
 */

/** Frequent values of the columns read as codes: `case <column> when '<text>' then <index> ... else <column> end`. */
const ROLES = ['full', 'baseline', 'readonly', 'none']
const KINDS = ['user', 'agent']
const SOURCE_KINDS = ['system_migration']
const POLICIES = ['v1']

const coded = (column: string, texts: readonly string[]) => `case ${column} ${texts.map((t, i) => `when '${t}' then ${i}`).join(' ')} else ${column} end`

/** Ceiling texts passed to the edge read; at most this many (unused places are NULL, which matches nothing). */
const CEILING_PLACES = 8
const ceilingCase = `case ceiling ${Array.from({length: CEILING_PLACES}, (_, i) => `when ? then ${i}`).join(' ')} else ceiling end`

const AGENT_READ = `select id, project_id, ${coded('role', ROLES)}, case when deleted_at is null then 0 else 1 end, config_readable,
  nullif(applied_role, role), assign_mode_service_account, ${coded('created_by_kind', KINDS)}, created_by_id from agents`

const EDGE_READ = `select id, delegate_agent_id, project_id, ${coded('delegator_kind', KINDS)}, delegator_id, ${coded('role', ROLES)}, provenance_version,
  ${coded('source_credential_kind', SOURCE_KINDS)}, ${ceilingCase}, ${coded('ceiling_policy', POLICIES)},
  case when ceiling_project_id = project_id then 0 else ceiling_project_id end
  from delegation_edges where active = 1`

/**
 * The ceiling texts of the last read, in order of first sight: the next read passes them so
 * SQLite answers each matching row with a number. Per process and database alike: a text that
 * is not (or no longer) among them simply comes back as text.
 */
let knownCeilings: string[] = []

export async function readPlannerWorld(arrays: NonNullable<ArrayReader>): Promise<{agents: PlannerAgentFacts[]; edges: EdgeFacts[]}> {
  const agents: PlannerAgentFacts[] = []
  const edges: EdgeFacts[] = []
  const texts = new Map<string, string>()
  const intern = <T extends string | null>(s: T): T => {
    if (s === null) return s
    const hit = texts.get(s)
    if (hit !== undefined) return hit as T
    texts.set(s, s)
    return s
  }
  /** A value read through `coded`: its text from the table, or the text itself (interned). */
  const decode = (v: unknown, table: readonly string[]): string => (typeof v === 'number' ? table[v] : intern(v as string))
  const ceilings = knownCeilings
  // Ceiling texts of this read: known ones met (by place), others in order of first sight.
  const used: boolean[] = []
  const seen: string[] = []
  const agent = (r: unknown[]) => {
    const role = decode(r[2], ROLES)
    const readable = r[4] === 1
    const applied = r[5] as string | null
    agents.push({
      id: r[0] as string,
      projectId: intern(r[1] as string),
      createdBy: r[8] ? {kind: decode(r[7], KINDS), id: r[8] as string} : null,
      role,
      appliedRole: readable ? (applied === null ? role : intern(applied)) : null,
      assignModeServiceAccount: readable && r[6] === 1,
      configReadable: readable,
      deleted: r[3] === 1,
    })
  }
  const edge = (r: unknown[]) => {
    const projectId = intern(r[2] as string)
    let ceiling = r[8] as string | number | null
    if (typeof ceiling === 'number') {
      used[ceiling] = true
      ceiling = ceilings[ceiling]
    } else if (ceiling !== null) {
      const before = texts.size
      ceiling = intern(ceiling)
      if (texts.size > before) seen.push(ceiling)
    }
    const source = r[7]
    const policy = r[9]
    const ceilingProject = r[10]
    edges.push({
      id: r[0] as string,
      delegateAgentId: r[1] as string,
      projectId,
      delegator: {kind: decode(r[3], KINDS), id: r[4] as string},
      role: decode(r[5], ROLES),
      provenanceVersion: Number(r[6]),
      sourceCredentialKind: source === null ? null : decode(source, SOURCE_KINDS),
      ceiling,
      ceilingPolicy: policy === null ? null : decode(policy, POLICIES),
      ceilingProjectId: ceilingProject === 0 ? projectId : intern(ceilingProject as string | null),
      active: true,
    })
  }
  const params = Array.from({length: CEILING_PLACES}, (_, i) => ceilings[i] ?? null)
  // Read together: agents and edges of one state of the database, as a joined query gives.
  await arrays({text: AGENT_READ, onRow: agent}, {text: EDGE_READ, params, onRow: edge})
  // The next read's ceilings: those this read met, known ones first, as many as there are places.
  knownCeilings = [...ceilings.filter((_, i) => used[i]), ...seen].slice(0, CEILING_PLACES)
  return {agents, edges}
}
