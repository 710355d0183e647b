import type {Kysely} from 'kysely'

/**
 * `delegation_adoptions.reserved`: room a cohort record keeps, from the snapshot, for what its
 * adoption writes into the row (the adopted edge's ID, the actor and the after summary, ~0.5 KB).
 * On SQLite a start-up hop's update grew the row in place, and the records are written in pass
 * order, packed: most hops split a page of the table, ~3 of the ~13 pages each hop's commit
 * wrote to the WAL. The snapshot now fills this column with as many bytes as the adoption will
 * add and the hop's update empties it, so the row keeps its size. Never read; NULL on every
 * other record and on PostgreSQL (whose updates write a new row version anyway).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('delegation_adoptions').addColumn('reserved', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('delegation_adoptions').dropColumn('reserved').execute()
}
