import type {Kysely} from 'kysely'
import type {Database} from '../schema.js'

/** Hub-wide key/value settings (markers, cohort headers, the maintenance row) as JSON. */
export const hubSettingsRepo = (db: Kysely<Database>) => ({
  async get<T>(key: string): Promise<T | null> {
    const r = await db.selectFrom('hub_settings').select('value').where('key', '=', key).executeTakeFirst()
    return r ? (JSON.parse(r.value) as T) : null
  },
  async put(key: string, value: unknown, now: string): Promise<void> {
    await db
      .insertInto('hub_settings')
      .values({key, value: JSON.stringify(value), updated_at: now})
      .onConflict((oc) => oc.column('key').doUpdateSet({value: JSON.stringify(value), updated_at: now}))
      .execute()
  },
  /** Removes a key (tests use it to stand for a database written before the key existed). */
  async delete(key: string): Promise<void> {
    await db.deleteFrom('hub_settings').where('key', '=', key).execute()
  },
})
