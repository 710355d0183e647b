import type {Kysely, Selectable} from 'kysely'
import {compiledStatement, kyselyExec, type Exec} from '../compiled-statement.js'
import type {Database, DelegationAdoptionsTable} from '../schema.js'
import type {ArrayReader} from '../store.js'

/** An adoption record (CONTRACT.md "Adoption record"), plus the hop depth used to go top-down. */
export interface AdoptionRecord {
  id: string
  status: string
  reason: string | null
  origin: string
  originalEdgeId: string | null
  adoptedEdgeId: string | null
  beforeFingerprint: string | null
  projectId: string | null
  delegateAgentId: string | null
  depth: number
  actorKind: string | null
  actorId: string | null
  afterSummary: Record<string, unknown> | null
  revertedByKind: string | null
  revertedById: string | null
  revertedAt: string | null
  revertSummary: Record<string, unknown> | null
  createdAt: string
  updatedAt: string
}

/**
 * `reserve`: bytes the record's row keeps for its adoption's writes (SQLite; migration 0031),
 * so the update that adopts it does not grow the row and split its page.
 */
export type NewAdoption = Omit<AdoptionRecord, 'updatedAt'> & {reserve?: number}

export interface AdoptionPatch {
  status?: string
  reason?: string | null
  /** An admin commit that adopts a start-up record's hop makes it an `admin_commit` record. */
  origin?: string
  adoptedEdgeId?: string | null
  actorKind?: string | null
  actorId?: string | null
  afterSummary?: Record<string, unknown> | null
  revertedByKind?: string | null
  revertedById?: string | null
  revertedAt?: string | null
  revertSummary?: Record<string, unknown> | null
  /** Null: the room kept for the adoption is taken (written together with what fills it). */
  reserved?: null
}

export interface AdoptionFilter {
  status?: string
  reason?: string
  projectId?: string
}

const json = (t: string | null) => (t === null ? null : (JSON.parse(t) as Record<string, unknown>))

const toRecord = (r: Row): AdoptionRecord => ({
  id: r.id,
  status: r.status,
  reason: r.reason,
  origin: r.origin,
  originalEdgeId: r.original_edge_id,
  adoptedEdgeId: r.adopted_edge_id,
  beforeFingerprint: r.before_fingerprint,
  projectId: r.project_id,
  delegateAgentId: r.delegate_agent_id,
  depth: Number(r.depth),
  actorKind: r.actor_kind,
  actorId: r.actor_id,
  afterSummary: json(r.after_summary),
  revertedByKind: r.reverted_by_kind,
  revertedById: r.reverted_by_id,
  revertedAt: r.reverted_at,
  revertSummary: json(r.revert_summary),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
})

/** The row's columns as read and written, without `reserved` (written by SQLite's insert only, never read). */
type Row = Omit<Selectable<DelegationAdoptionsTable>, 'reserved'>

const toRow = (a: NewAdoption): Row => ({
  id: a.id,
  status: a.status,
  reason: a.reason,
  origin: a.origin,
  original_edge_id: a.originalEdgeId,
  adopted_edge_id: a.adoptedEdgeId,
  before_fingerprint: a.beforeFingerprint,
  project_id: a.projectId,
  delegate_agent_id: a.delegateAgentId,
  depth: a.depth,
  actor_kind: a.actorKind,
  actor_id: a.actorId,
  after_summary: a.afterSummary ? JSON.stringify(a.afterSummary) : null,
  reverted_by_kind: a.revertedByKind,
  reverted_by_id: a.revertedById,
  reverted_at: a.revertedAt,
  revert_summary: a.revertSummary ? JSON.stringify(a.revertSummary) : null,
  created_at: a.createdAt,
  updated_at: a.createdAt,
})

// 19 columns a row: stay under SQLite's bound-parameter limit.
const BATCH = 400

// The columns `toRow` writes, in its order.
const ROW_COLUMNS = Object.keys(toRow({} as NewAdoption)) as Array<keyof Row>
/** A multi-row insert of `n` records, as SQL text (one text per batch size, built once). */
const insertTexts = new Map<string, string>()
const insertText = (n: number, reserved: boolean): string => {
  const key = `${n}${reserved ? 'r' : ''}`
  let hit = insertTexts.get(key)
  if (hit === undefined) {
    const columns = reserved ? [...ROW_COLUMNS, 'reserved'] : ROW_COLUMNS
    const row = `(${columns.map(() => '?').join(', ')})`
    insertTexts.set(key, (hit = `insert into delegation_adoptions (${columns.join(', ')}) values ${Array.from({length: n}, () => row).join(', ')}`))
  }
  return hit
}
/** The text that fills a record's reserve of `n` bytes: one string per size (a snapshot has a few sizes). */
const fillers = new Map<number, string>()
const filler = (n: number): string => {
  let hit = fillers.get(n)
  if (hit === undefined) fillers.set(n, (hit = ' '.repeat(n)))
  return hit
}

/** A record from a value array in `ROW_COLUMNS` order. */
const at = Object.fromEntries(ROW_COLUMNS.map((c, i) => [c, i])) as Record<keyof Row, number>
const recordOfArray = (r: unknown[]): AdoptionRecord => ({
  id: r[at.id] as string,
  status: r[at.status] as string,
  reason: r[at.reason] as string | null,
  origin: r[at.origin] as string,
  originalEdgeId: r[at.original_edge_id] as string | null,
  adoptedEdgeId: r[at.adopted_edge_id] as string | null,
  beforeFingerprint: r[at.before_fingerprint] as string | null,
  projectId: r[at.project_id] as string | null,
  delegateAgentId: r[at.delegate_agent_id] as string | null,
  depth: Number(r[at.depth]),
  actorKind: r[at.actor_kind] as string | null,
  actorId: r[at.actor_id] as string | null,
  afterSummary: json(r[at.after_summary] as string | null),
  revertedByKind: r[at.reverted_by_kind] as string | null,
  revertedById: r[at.reverted_by_id] as string | null,
  revertedAt: r[at.reverted_at] as string | null,
  revertSummary: json(r[at.revert_summary] as string | null),
  createdAt: r[at.created_at] as string,
  updatedAt: r[at.updated_at] as string,
})

/** Columns of a patch; `update` writes those present (undefined: left as is). */
const PATCH_COLUMNS: ReadonlyArray<[keyof AdoptionPatch, string, ((v: unknown) => unknown)?]> = [
  ['status', 'status'],
  ['reason', 'reason'],
  ['origin', 'origin'],
  ['adoptedEdgeId', 'adopted_edge_id'],
  ['actorKind', 'actor_kind'],
  ['actorId', 'actor_id'],
  ['afterSummary', 'after_summary', (v) => (v ? JSON.stringify(v) : null)],
  ['revertedByKind', 'reverted_by_kind'],
  ['revertedById', 'reverted_by_id'],
  ['revertedAt', 'reverted_at'],
  ['revertSummary', 'revert_summary', (v) => (v ? JSON.stringify(v) : null)],
  ['reserved', 'reserved'],
]
/** The update's SQL text per set of patched columns (a start-up pass writes 100k of one shape). */
const updateTexts = new Map<string, string>()
const updateText = (columns: string[], conditional: boolean): string => {
  const key = `${columns.join(',')}${conditional ? '?' : ''}`
  let hit = updateTexts.get(key)
  if (hit === undefined) updateTexts.set(key, (hit = `update delegation_adoptions set updated_at = ?${columns.map((c) => `, ${c} = ?`).join('')} where id = ?${conditional ? ' and status = ?' : ''}`))
  return hit
}

/** The write a start-up adoption hop runs (100k hops), against `Exec` (see delegation-edges.ts `edgeStatements`). */
export const adoptionStatements = (x: Exec) => ({
  /**
   * Updates a record; with `onlyIfStatus`, only while it still has that status (a start-up pass
   * must not overwrite a record an admin commit took over meanwhile). True when a row changed.
   */
  async update(id: string, patch: AdoptionPatch, now: string, onlyIfStatus?: string): Promise<boolean> {
    const columns: string[] = []
    const params: unknown[] = [now]
    for (const [field, column, encode] of PATCH_COLUMNS) {
      const v = patch[field]
      if (v === undefined) continue
      columns.push(column)
      params.push(encode ? encode(v) : v)
    }
    params.push(id)
    if (onlyIfStatus !== undefined) params.push(onlyIfStatus)
    return (await x.run(updateText(columns, onlyIfStatus !== undefined), params)) === 1
  },
})

export const delegationAdoptionsRepo = (db: Kysely<Database>, arrays: ArrayReader = null) => {
  const filtered = (f: AdoptionFilter) => {
    let q = db.selectFrom('delegation_adoptions')
    if (f.status) q = q.where('status', '=', f.status)
    if (f.reason) q = q.where('reason', '=', f.reason)
    if (f.projectId) q = q.where('project_id', '=', f.projectId)
    return q
  }
  return {
    ...adoptionStatements(kyselyExec(db)),
    /**
     * In batches of BATCH rows, each batch's statement text built once (a cohort snapshot writes
     * 100k). On SQLite (`arrays`: the store reads value arrays there) a record's `reserve` is
     * written as that many bytes of `reserved`; PostgreSQL leaves it NULL.
     */
    async insertMany(records: NewAdoption[]): Promise<void> {
      const reserved = arrays !== null
      for (let i = 0; i < records.length; i += BATCH) {
        const batch = records.slice(i, i + BATCH)
        const params: unknown[] = []
        for (const r of batch) {
          const row = toRow(r)
          for (const c of ROW_COLUMNS) params.push(row[c])
          if (reserved) params.push(r.reserve ? filler(r.reserve) : null)
        }
        await compiledStatement(db, insertText(batch.length, reserved))(params)
      }
    },
    async get(id: string): Promise<AdoptionRecord | null> {
      const r = await db.selectFrom('delegation_adoptions').selectAll().where('id', '=', id).executeTakeFirst()
      return r ? toRecord(r) : null
    },
    async getMany(ids: string[]): Promise<AdoptionRecord[]> {
      if (ids.length === 0) return []
      const rows = await db.selectFrom('delegation_adoptions').selectAll().where('id', 'in', ids).execute()
      return rows.map(toRecord)
    },
    /** Records in a stable order: top-down by depth, then by ID. */
    async list(f: AdoptionFilter & {limit?: number; offset?: number} = {}): Promise<AdoptionRecord[]> {
      let q = filtered(f).selectAll().orderBy('depth').orderBy('created_at').orderBy('id')
      if (f.limit !== undefined) q = q.limit(f.limit).offset(f.offset ?? 0)
      const rows = await q.execute()
      return rows.map(toRecord)
    },
    async count(f: AdoptionFilter = {}): Promise<number> {
      const r = await filtered(f).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
      return Number(r.n)
    },
    async countsByStatus(): Promise<Record<string, number>> {
      const rows = await db.selectFrom('delegation_adoptions').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('status').execute()
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]))
    },
    async countsByReason(): Promise<Record<string, number>> {
      const rows = await db.selectFrom('delegation_adoptions').select(['reason', (eb) => eb.fn.countAll<number>().as('n')]).where('reason', 'is not', null).groupBy('reason').execute()
      return Object.fromEntries(rows.map((r) => [r.reason as string, Number(r.n)]))
    },
    /**
     * Which records name which original edge, lean, leaving out records with `exceptStatus`: the
     * admin plan asks for every record that may name an active edge (100k after a start-up
     * adoption, so on SQLite they come as value arrays, and the status filter runs inside the
     * covering index).
     */
    async originalEdgeIndex(exceptStatus?: string): Promise<Array<{id: string; status: string; originalEdgeId: string; createdAt: string}>> {
      if (arrays) {
        const out: Array<{id: string; status: string; originalEdgeId: string; createdAt: string}> = []
        const statuses = new Map<string, string>()
        await arrays({
          text: `select id, status, original_edge_id, created_at from delegation_adoptions where original_edge_id is not null${exceptStatus === undefined ? '' : ' and status <> ?'}`,
          params: exceptStatus === undefined ? [] : [exceptStatus],
          onRow: (r) => {
            // Statuses are few: one string each instead of one per record.
            const status = r[1] as string
            out.push({id: r[0] as string, status: statuses.get(status) ?? (statuses.set(status, status), status), originalEdgeId: r[2] as string, createdAt: r[3] as string})
          },
        })
        return out
      }
      let q = db.selectFrom('delegation_adoptions').select(['id', 'status', 'original_edge_id', 'created_at']).where('original_edge_id', 'is not', null)
      if (exceptStatus !== undefined) q = q.where('status', '<>', exceptStatus)
      const rows = await q.execute()
      return rows.map((r) => ({id: r.id, status: r.status, originalEdgeId: r.original_edge_id as string, createdAt: r.created_at}))
    },
    async byAdoptedEdge(edgeId: string): Promise<AdoptionRecord[]> {
      const rows = await db.selectFrom('delegation_adoptions').selectAll().where('adopted_edge_id', '=', edgeId).orderBy('id').execute()
      return rows.map(toRecord)
    },
    /** Records naming the edge as their original (examined) edge. */
    async byOriginalEdge(edgeId: string): Promise<AdoptionRecord[]> {
      const rows = await db.selectFrom('delegation_adoptions').selectAll().where('original_edge_id', '=', edgeId).orderBy('id').execute()
      return rows.map(toRecord)
    },
    /** Counts of the records of one origin by status (the marker's counts). */
    /**
     * Every record of one status and origin, in no particular order: a start-up pass reads its
     * cohort's pending records (100k at a first start) and orders them itself, so the database
     * neither sorts them nor sends records of other origins.
     */
    async listOf(status: string, origin: string): Promise<AdoptionRecord[]> {
      if (!arrays) return (await db.selectFrom('delegation_adoptions').selectAll().where('status', '=', status).where('origin', '=', origin).execute()).map(toRecord)
      // SQLite: value arrays, no object per row from the driver (100k records: ~1 s less).
      const out: AdoptionRecord[] = []
      await arrays({
        text: `select ${ROW_COLUMNS.join(', ')} from delegation_adoptions where status = ? and origin = ?`,
        params: [status, origin],
        onRow: (r) => out.push(recordOfArray(r)),
      })
      return out
    },
    async countsByStatusOf(origin: string): Promise<Record<string, number>> {
      const rows = await db.selectFrom('delegation_adoptions').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).where('origin', '=', origin).groupBy('status').execute()
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]))
    },
  }
}

export type DelegationAdoptionsRepo = ReturnType<typeof delegationAdoptionsRepo>
