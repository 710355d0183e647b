import type {Kysely} from 'kysely'
import type {Database} from '../schema.js'

export type SectionOrigin = 'seeded' | 'managed'

/** One Layer-1 settings section as stored. */
export interface SectionRow {
  section: string
  /** Dotted key -> value (null: cleared). */
  value: Record<string, unknown>
  origin: SectionOrigin
  source: string
  revision: number
  updatedBy: string | null
  updatedAt: string
}

const toRow = (r: Database['settings_sections'] extends infer T ? T : never): SectionRow => {
  const t = r as {section: string; value: string; origin: string; source: string; revision: number | string; updated_by: string | null; updated_at: string}
  return {section: t.section, value: JSON.parse(t.value), origin: t.origin as SectionOrigin, source: t.source, revision: Number(t.revision), updatedBy: t.updated_by, updatedAt: t.updated_at}
}

/**
 * Settings sections with optimistic locking: every write names the revision it read and
 * changes nothing (returns false) when the row has moved on.
 */
export const settingsSectionsRepo = (db: Kysely<Database>) => ({
  async list(): Promise<SectionRow[]> {
    return (await db.selectFrom('settings_sections').selectAll().execute()).map(toRow)
  },
  async get(section: string): Promise<SectionRow | null> {
    const r = await db.selectFrom('settings_sections').selectAll().where('section', '=', section).executeTakeFirst()
    return r ? toRow(r) : null
  },
  /** Inserts revision 1; false when a row already exists (another replica seeded it first). */
  async insert(row: Omit<SectionRow, 'revision'>): Promise<boolean> {
    const res = await db
      .insertInto('settings_sections')
      .values({section: row.section, value: JSON.stringify(row.value), origin: row.origin, source: row.source, revision: 1, updated_by: row.updatedBy, updated_at: row.updatedAt})
      .onConflict((oc) => oc.column('section').doNothing())
      .executeTakeFirst()
    return Number(res.numInsertedOrUpdatedRows ?? 0) === 1
  },
  /** Writes a new value at `expected + 1`; false when the stored revision is not `expected`. */
  async update(row: Omit<SectionRow, 'revision'>, expected: number): Promise<boolean> {
    const res = await db
      .updateTable('settings_sections')
      .set({value: JSON.stringify(row.value), origin: row.origin, source: row.source, revision: expected + 1, updated_by: row.updatedBy, updated_at: row.updatedAt})
      .where('section', '=', row.section)
      .where('revision', '=', expected)
      .executeTakeFirst()
    return Number(res.numUpdatedRows) === 1
  },
  async delete(section: string): Promise<boolean> {
    const res = await db.deleteFrom('settings_sections').where('section', '=', section).executeTakeFirst()
    return Number(res.numDeletedRows) === 1
  },
})
