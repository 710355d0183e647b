import type {Kysely} from 'kysely'

/** A user's built-in Hub role (domain/authz/hub-roles.ts); null: none. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('hub_role', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('hub_role').execute()
}
