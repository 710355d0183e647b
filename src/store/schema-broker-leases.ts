/** Columns of `brokers` added by migration 0025 (broker leases), merged into its table type. */
import type {Generated} from 'kysely'

declare module './schema.js' {
  interface BrokersTable {
    /** The Hub process holding the broker's tunnel (a random ID per process), and until when. */
    lease_holder: Generated<string | null>
    lease_until: Generated<string | null>
  }
}
