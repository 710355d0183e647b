import type {Kysely} from 'kysely'
import type {Database} from '../schema.js'

/** A project's annotations (`svc/...` keys mapped to their raw string values). */
export const projectAnnotationsRepo = (db: Kysely<Database>) => ({
  async all(projectId: string): Promise<Record<string, string>> {
    const rows = await db.selectFrom('project_annotations').select(['key', 'value']).where('project_id', '=', projectId).execute()
    return Object.fromEntries(rows.map((r) => [r.key, r.value]))
  },
  /** Sets (string) or clears (null) each key; one call is one transaction's worth of writes. */
  async apply(projectId: string, changes: Record<string, string | null>, by: string, now: string): Promise<void> {
    for (const [key, value] of Object.entries(changes)) {
      if (value === null) {
        await db.deleteFrom('project_annotations').where('project_id', '=', projectId).where('key', '=', key).execute()
      } else {
        await db
          .insertInto('project_annotations')
          .values({project_id: projectId, key, value, updated_by: by, updated_at: now})
          .onConflict((oc) => oc.columns(['project_id', 'key']).doUpdateSet({value, updated_by: by, updated_at: now}))
          .execute()
      }
    }
  },
})
