/** The table of the replica directory (migration 0027), merged into the database type. */

/** One Hub replica: the URL other replicas reach it at, and its heartbeat. */
export interface ReplicasTable {
  /** The replica's broker lease holder id (brokers.lease_holder). */
  id: string
  url: string
  started_at: string
  seen_at: string
}

declare module './schema.js' {
  interface Database {
    replicas: ReplicasTable
  }
}
