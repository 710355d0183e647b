import type {Logger} from 'pino'
import type {Store} from '../../store/store.js'
import {isSealed, openSealed, seal} from '../secrets/sealing.js'

/**
 * Broker signing secrets at rest: sealed with the Hub's secrets key like project secrets
 * (sealing.ts), bound to their broker's ID, so the column alone never signs a request. The Hub
 * opens one to verify a signature; it is never returned after the join that issued it.
 */
const aad = (brokerId: string) => `broker/${brokerId}`

export const sealBrokerSecret = (key: Buffer, brokerId: string, secret: string) => seal(key, aad(brokerId), secret)

/** The plaintext of a stored broker secret; throws when it was sealed under another key or for another broker. */
export const openBrokerSecret = (key: Buffer, brokerId: string, stored: string) => openSealed(key, aad(brokerId), stored)

/**
 * Seals the broker secrets an earlier release stored in plaintext. Runs at start-up once the
 * schema is current, under the migration lock on PostgreSQL (a migration module cannot reach
 * the secrets key, which lives outside the database). Idempotent and safe beside other
 * replicas without the lock too: a sealed value is skipped, and each row is replaced only if it
 * still holds the plaintext read. The key is loaded only when there is something to seal.
 */
export async function sealPlaintextBrokerSecrets(store: Store, key: () => Buffer, logger: Logger): Promise<number> {
  let sealed = 0
  for (const r of await store.brokers.storedSecrets()) {
    if (isSealed(r.secret)) continue
    if (await store.brokers.replaceSecret(r.id, r.secret, sealBrokerSecret(key(), r.id, r.secret))) sealed++
  }
  if (sealed) logger.info({brokers: sealed}, 'encrypted broker secrets an earlier release stored in plaintext')
  return sealed
}
