import type {Kysely} from 'kysely'

/**
 * The URL a broker clones a project from. `git_remote` is the normalised key that finds a project
 * however its remote is spelled (`github.com/org/repo`), which git cannot clone; `clone_url` is the
 * remote as registered, without credentials. Projects registered before it have none: brokers
 * then clone `https://<git_remote>` (clone-url.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('projects').addColumn('clone_url', 'text').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('projects').dropColumn('clone_url').execute()
}
