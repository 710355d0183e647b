import {CompiledQuery, sql, type Kysely, type QueryResult} from 'kysely'

/**
 * A statement written once as SQL text with `?` placeholders and run as it is: no query
 * builder, no compilation per call. For hot paths that run one statement shape many times (the
 * start-up adoption writes 100k hops, five statements each): building and compiling a Kysely
 * query cost more than SQLite running it. PostgreSQL gets `$1, $2, …` in place of `?` (the
 * texts never hold a literal `?`). On SQLite the connection keeps the prepared statement per text
 * (sqlite-statements.ts), so the statement is prepared once.
 */
export function compiledStatement<Db, Row = Record<string, unknown>>(db: Kysely<Db>, text: string): (params: readonly unknown[]) => Promise<QueryResult<Row>> {
  const final = usesDollarPlaceholders(db) ? numbered(text) : text
  return (params) => db.executeQuery(CompiledQuery.raw(final, params as unknown[])) as Promise<QueryResult<Row>>
}

/** `?` placeholders numbered as PostgreSQL wants them. */
export function dollarPlaceholders(text: string): string {
  let n = 0
  return text.replace(/\?/g, () => `$${++n}`)
}

const texts = new Map<string, string>()
const numbered = (text: string): string => {
  let hit = texts.get(text)
  if (hit === undefined) texts.set(text, (hit = dollarPlaceholders(text)))
  return hit
}

// Whether a dialect numbers its placeholders: asked of its compiler once per database object.
const dollar = new WeakMap<object, boolean>()
function usesDollarPlaceholders<Db>(db: Kysely<Db>): boolean {
  const key = db.getExecutor().adapter
  let hit = dollar.get(key)
  if (hit === undefined) dollar.set(key, (hit = sql`${1}`.compile(db).sql === '$1'))
  return hit
}

/** Rows changed by a write run through `compiledStatement`. */
export const changed = (r: QueryResult<unknown>): number => Number(r.numAffectedRows ?? 0)

/**
 * Runs SQL texts with `?` placeholders: through Kysely (`kyselyExec`) or, for a transaction that
 * holds the SQLite connection (a bulk pass's hop, a batch of status reports), on the connection
 * itself (store/connection-transaction.ts). Hot
 * statements are written once against it, so both paths run the same text.
 */
export interface Exec {
  /** A write; answers the rows it changed. */
  run(text: string, params: readonly unknown[]): Promise<number>
  /** A read; rows as objects keyed by column name. */
  all<Row>(text: string, params: readonly unknown[]): Promise<Row[]>
}

export function kyselyExec<Db>(db: Kysely<Db>): Exec {
  return {
    run: async (text, params) => changed(await compiledStatement(db, text)(params)),
    all: async <Row>(text: string, params: readonly unknown[]) => (await compiledStatement<Db, Row>(db, text)(params)).rows,
  }
}
