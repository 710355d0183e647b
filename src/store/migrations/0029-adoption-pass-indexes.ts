import {sql, type Kysely} from 'kysely'

/**
 * Fewer index pages written by each start-up adoption hop (one transaction per hop, 100k hops;
 * each commit writes every page it dirtied, whole, to the WAL):
 * - `delegation_edges_delegator` (delegator kind, ID) goes: no query looks edges up by their
 *   delegator (the walk, the planner and the pass go from the delegate up), and every adopted
 *   edge put an entry on a page of its own (1.5 of the ~18 pages a hop wrote).
 * - `delegation_adoptions_adopted` keeps only records that name an adopted edge: the cohort's
 *   100k records start without one, and moving each record's entry out of the NULL part of the
 *   index was one more page per hop. Its one query (`byAdoptedEdge`, `adopted_edge_id = ?`)
 *   implies the index's condition, so both databases still use it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('delegation_edges_delegator').execute()
  await db.schema.dropIndex('delegation_adoptions_adopted').execute()
  await db.schema
    .createIndex('delegation_adoptions_adopted')
    .on('delegation_adoptions')
    .column('adopted_edge_id')
    .where(sql<boolean>`adopted_edge_id is not null`)
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('delegation_adoptions_adopted').execute()
  await db.schema.createIndex('delegation_adoptions_adopted').on('delegation_adoptions').column('adopted_edge_id').execute()
  await db.schema.createIndex('delegation_edges_delegator').on('delegation_edges').columns(['delegator_kind', 'delegator_id']).execute()
}
