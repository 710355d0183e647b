import type {ArrayReader} from '../store.js'
import type {PlannerAgentFacts} from './agents.js'
import type {EdgeFacts} from './delegation-edges.js'

/**
 * The SQLite bulk read of the delegation planner's world (agents.listPlannerWorld): every agent
 * (deleted too) and every active edge.
 *
 * Built for a full adoption preview of 100k agents, where making JS values is most of the cost
 * and every short-lived string feeds the collector while the world it builds survives. So
 * columns with few values come back from SQLite as small codes where the value is a frequent
 * one (below): no string is made for them, nor looked up to be interned. Any other value comes
 * back as its text (interned), so the codes only ever decide how a value travels, never what it
 * is. An adopted edge's ceiling project is its own project (answered as a code), and its ceiling
 * one of the few texts the previous read saw (passed as parameters, answered as their place):
 * the ceiling texts are ~0.5 KB each, 50 MB of strings per read of 100k adopted edges otherwise.
 *
 * Each table comes back packed: one text of every row's fields, joined by a separator, and the
 * row count (`group_concat`). Stepping 100k rows through the driver costs ~0.5 us a row before
 * any value (an array per row, a call per step): the packed read of 100k agents takes about a
 * third of the row-by-row one, and the IDs it gives are slices of the one text, not strings of
 * their own. A value holding the separator (or a NULL where the schema has none) shows as fields
 * left over or missing; the read is then done again row by row (AGENT_READ, EDGE_READ), which
 * takes any value. Agents come in ID order (the covering index agents_planner).
 */

/** Frequent values of the columns read as codes. */
const ROLES = ['full', 'baseline', 'readonly', 'none']
const KINDS = ['user', 'agent']
const SOURCE_KINDS = ['system_migration']
const POLICIES = ['v1']

/** Row by row: `case <column> when '<text>' then <index> ... else <column> end`. */
const coded = (column: string, texts: readonly string[]) => `case ${column} ${texts.map((t, i) => `when '${t}' then ${i}`).join(' ')} else ${column} end`

/** Ceiling texts passed to the edge read; at most this many (unused places are NULL, which matches nothing). */
const CEILING_PLACES = 8
const ceilingCase = `case ceiling ${Array.from({length: CEILING_PLACES}, (_, i) => `when ? then ${i}`).join(' ')} else ceiling end`

const AGENT_READ = `select id, project_id, ${coded('role', ROLES)}, case when deleted_at is null then 0 else 1 end, config_readable,
  nullif(applied_role, role), assign_mode_service_account, ${coded('created_by_kind', KINDS)}, created_by_id from agents order by id`

const EDGE_READ = `select id, delegate_agent_id, project_id, ${coded('delegator_kind', KINDS)}, delegator_id, ${coded('role', ROLES)}, provenance_version,
  ${coded('source_credential_kind', SOURCE_KINDS)}, ${ceilingCase}, ${coded('ceiling_policy', POLICIES)},
  case when ceiling_project_id = project_id then 0 else ceiling_project_id end
  from delegation_edges where active = 1`

/*
 * Packed: a field is its text (ID columns, NOT NULL), or, for the columns read as codes and the
 * nullable ones, one digit (a code), `=` and the text, or nothing for NULL.
 */
const SEP = 31
const packedText = (x: string) => `ifnull('=' || ${x}, '')`
const packedCode = (column: string, texts: readonly string[]) => `case ${column} ${texts.map((t, i) => `when '${t}' then '${i}'`).join(' ')} else ${packedText(column)} end`
// concat_ws: one call a row (a chain of `||` makes a string per step). It skips a NULL, which
// leaves the row a field short: the read then fails its count and is done again row by row.
const packed = (fields: string[], from: string) => `select count(*), group_concat(line, char(${SEP})) from (select concat_ws(char(${SEP}), ${fields.join(', ')}) as line from ${from})`

const PACKED_AGENT_READ = packed(
  ['id', 'project_id', packedCode('role', ROLES), `(deleted_at is not null)`, `(config_readable is 1)`, packedText('nullif(applied_role, role)'),
    `(assign_mode_service_account is 1)`, packedCode('created_by_kind', KINDS), `ifnull(created_by_id, '')`],
  'agents order by id',
)
const PACKED_EDGE_READ = packed(
  ['id', 'delegate_agent_id', 'project_id', packedCode('delegator_kind', KINDS), 'delegator_id', packedCode('role', ROLES), `ifnull(provenance_version, '')`,
    packedCode('source_credential_kind', SOURCE_KINDS), `case ceiling ${Array.from({length: CEILING_PLACES}, (_, i) => `when ? then '${i}'`).join(' ')} else ${packedText('ceiling')} end`,
    packedCode('ceiling_policy', POLICIES), `case when ceiling_project_id = project_id then '0' else ${packedText('ceiling_project_id')} end`],
  'delegation_edges where active = 1',
)

/** Buffer's own decoder (what `toString('latin1', from, to)` calls, without its argument checks): one call a field. */
type Latin1 = Buffer & {latin1Slice(from: number, to: number): string}
/** Not documented by Node: without it, fields are slices of the text (correct, ~10% slower to plan). */
const HAS_LATIN1_SLICE = typeof (Buffer.prototype as Partial<Latin1>).latin1Slice === 'function'

/**
 * The buffer the packed texts are copied into, kept between reads and let go a while after the
 * last: a new buffer per read (~15 MB each for 100k agents or edges) is memory outside the heap
 * that V8 answers with full collections of the heap the planner is building.
 */
let scratch: Latin1 | null = null
let release: NodeJS.Timeout | undefined
const SCRATCH_KEPT_MS = 60_000
function latin1Copy(s: string): Latin1 {
  if (!scratch || scratch.length < s.length) scratch = Buffer.allocUnsafeSlow(Math.max(s.length, 1 << 20)) as Latin1
  scratch.write(s, 0, 'latin1')
  clearTimeout(release)
  release = setTimeout(() => (scratch = null), SCRATCH_KEPT_MS).unref()
  return scratch
}

/** A coded field's place (a code), or one of these. */
const NULL = -1
const TEXT = -2

/**
 * Reads a packed text field by field; `bad` once the text is not rows of the expected fields.
 * A field's text is a string of its own, not a slice of the packed text: V8 compares and hashes
 * a slice through its generic path, and the planner's maps are keyed and probed by these IDs
 * (measured: the plan and its fingerprint ~10% slower on slices). An ASCII text (all the IDs
 * the Hub makes) is copied into a buffer once, from which each field is one latin1 copy; any
 * other text is read as slices.
 */
class Cursor {
  pos = 0
  bad = false
  /** The text of the last TEXT code. */
  value = ''
  readonly #bytes: Latin1 | null
  constructor(readonly s: string) {
    this.#bytes = HAS_LATIN1_SLICE && Buffer.byteLength(s, 'utf8') === s.length ? latin1Copy(s) : null
  }
  /** The next field. */
  text(): string {
    const s = this.s
    const from = this.pos
    if (from > s.length) this.bad = true
    let end = s.indexOf('\x1f', from)
    if (end < 0) end = s.length
    this.pos = end + 1
    return this.#bytes ? this.#bytes.latin1Slice(from, end) : s.slice(from, end)
  }
  /** The next coded field: its code, NULL, or TEXT (its text in `value`). */
  code(): number {
    const s = this.s
    const p = this.pos
    const c = s.charCodeAt(p)
    if (c === SEP || p >= s.length) {
      if (p > s.length) this.bad = true
      this.pos = p + 1
      return NULL
    }
    if (c === 61 /* = */) {
      this.pos = p + 1
      this.value = this.text()
      return TEXT
    }
    const next = s.charCodeAt(p + 1)
    if (c < 48 || c > 57 || !(next === SEP || p + 1 === s.length)) this.bad = true
    this.pos = p + 2
    return c - 48
  }
}

/**
 * Visits the rows of a packed read (`[count, text]`), each read by `visit`; false when the text
 * does not hold exactly `count` rows (a value held the separator, or a row was NULL).
 */
function unpack(row: unknown[] | null, visit: (c: Cursor) => void): boolean {
  if (!row) return false
  const count = Number(row[0])
  if (row[1] === null) return count === 0
  const c = new Cursor(row[1] as string)
  for (let i = 0; i < count && !c.bad; i++) visit(c)
  return !c.bad && c.pos === c.s.length + 1
}

/**
 * The ceiling texts of the last read, in order of first sight: the next read passes them so
 * SQLite answers each matching row with a number. Per process and database alike: a text that
 * is not (or no longer) among them simply comes back as text.
 */
let knownCeilings: string[] = []

/** One read's visitors (packed and row by row) and what they build. */
function newRead(ceilings: readonly string[]) {
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
  /** A packed coded field, as `decode` reads a row's value. */
  const decodeAt = (c: Cursor, table: readonly string[]): string | null => {
    const code = c.code()
    return code >= 0 ? table[code] : code === TEXT ? intern(c.value) : null
  }
  // Ceiling texts of this read: known ones met (by place), others in order of first sight.
  const used: boolean[] = []
  const seen: string[] = []
  const ceilingText = (text: string): string => {
    const before = texts.size
    const ceiling = intern(text)
    if (texts.size > before) seen.push(ceiling)
    return ceiling
  }
  const pushAgent = (id: string, projectId: string, role: string, deleted: boolean, readable: boolean, applied: string | null, sa: boolean, kind: string, by: string | null) =>
    agents.push({
      id,
      projectId: intern(projectId),
      createdBy: by ? {kind, id: by} : null,
      role,
      appliedRole: readable ? (applied === null ? role : intern(applied)) : null,
      assignModeServiceAccount: readable && sa,
      configReadable: readable,
      deleted,
    })
  type Coded = string | null
  const pushEdge = (id: string, agentId: string, project: string, kind: string, by: string, role: string, version: number, source: Coded, ceiling: Coded, policy: Coded, ceilingProject: Coded) =>
    edges.push({id, delegateAgentId: agentId, projectId: project, delegator: {kind, id: by}, role, provenanceVersion: version, sourceCredentialKind: source, ceiling, ceilingPolicy: policy, ceilingProjectId: ceilingProject, active: true})
  return {
    agent(r: unknown[]) {
      const readable = r[4] === 1
      pushAgent(r[0] as string, r[1] as string, decode(r[2], ROLES), r[3] === 1, readable, r[5] as string | null, r[6] === 1, decode(r[7], KINDS), r[8] as string | null)
    },
    edge(r: unknown[]) {
      const projectId = intern(r[2] as string)
      let ceiling = r[8] as string | number | null
      if (typeof ceiling === 'number') {
        used[ceiling] = true
        ceiling = ceilings[ceiling]
      } else if (ceiling !== null) ceiling = ceilingText(ceiling)
      const source = r[7]
      const policy = r[9]
      const ceilingProject = r[10]
      pushEdge(r[0] as string, r[1] as string, projectId, decode(r[3], KINDS), r[4] as string, decode(r[5], ROLES), Number(r[6]), source === null ? null : decode(source, SOURCE_KINDS),
        ceiling, policy === null ? null : decode(policy, POLICIES), ceilingProject === 0 ? projectId : intern(ceilingProject as string | null))
    },
    packedAgent(c: Cursor) {
      // Arguments are evaluated in order: the fields' order.
      pushAgent(c.text(), c.text(), decodeAt(c, ROLES) as string, c.code() === 1, c.code() === 1, c.code() === TEXT ? c.value : null, c.code() === 1, decodeAt(c, KINDS) as string, c.text() || null)
    },
    packedEdge(c: Cursor) {
      const id = c.text()
      const agentId = c.text()
      const projectId = intern(c.text())
      const kind = decodeAt(c, KINDS) as string
      const by = c.text()
      const role = decodeAt(c, ROLES) as string
      const version = Number(c.text())
      const source = decodeAt(c, SOURCE_KINDS)
      const place = c.code()
      let ceiling: string | null = null
      if (place >= 0) {
        used[place] = true
        ceiling = ceilings[place]
      } else if (place === TEXT) ceiling = ceilingText(c.value)
      const policy = decodeAt(c, POLICIES)
      const ceilingProject = c.code()
      pushEdge(id, agentId, projectId, kind, by, role, version, source, ceiling, policy, ceilingProject === 0 ? projectId : ceilingProject === TEXT ? intern(c.value) : null)
    },
    done() {
      // The next read's ceilings: those this read met, known ones first, as many as there are places.
      knownCeilings = [...ceilings.filter((_, i) => used[i]), ...seen].slice(0, CEILING_PLACES)
      return {agents, edges}
    },
  }
}

/** Whether the packed read failed for a reason the row-by-row read does not have. */
function packedReadUnfit(err: unknown): boolean {
  const e = err as {code?: unknown; message?: unknown}
  return e?.code === 'SQLITE_TOOBIG' || err instanceof RangeError || (typeof e?.message === 'string' && e.message.includes('no such function: concat_ws'))
}

export async function readPlannerWorld(arrays: NonNullable<ArrayReader>): Promise<{agents: PlannerAgentFacts[]; edges: EdgeFacts[]}> {
  const ceilings = knownCeilings
  const params = Array.from({length: CEILING_PLACES}, (_, i) => ceilings[i] ?? null)
  const read = newRead(ceilings)
  let agents: unknown[] | null = null
  let edges: unknown[] | null = null
  let whole = false
  try {
    // Read together: agents and edges of one state of the database, as a joined query gives.
    await arrays({text: PACKED_AGENT_READ, onRow: (r) => (agents = r)}, {text: PACKED_EDGE_READ, params, onRow: (r) => (edges = r)})
    whole = unpack(agents, read.packedAgent) && unpack(edges, read.packedEdge)
  } catch (err) {
    // Only a text too long (better-sqlite3 caps SQLite's at the longest string V8 makes, ~537M
    // characters: millions of agents) or an SQLite without concat_ws is read row by row below;
    // any other failure (I/O, memory, a bug here) is the read's error.
    if (!packedReadUnfit(err)) throw err
  }
  if (!whole) {
    // A value holding the separator (or a NULL where none is expected): read again row by row.
    const again = newRead(ceilings)
    await arrays({text: AGENT_READ, onRow: again.agent}, {text: EDGE_READ, params, onRow: again.edge})
    return again.done()
  }
  return read.done()
}
