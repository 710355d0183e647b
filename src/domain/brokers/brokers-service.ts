import {AppError, notFound} from '../../api/app-error.js'
import {MAX_SKEW_SECONDS, NonceCache, SIGNATURE_HEADERS, verifySignature} from '../../api/broker-signing.js'
import type {Broker} from '../../store/repositories/brokers.js'
import type {CallContext} from '../authz/context.js'
import {iso} from '../shared/clock.js'
import {hashSecret, newId} from '../shared/secrets.js'
import {randomBytes} from 'node:crypto'
import type {Deps} from '../deps.js'
import {openBrokerSecret, sealBrokerSecret} from './broker-secrets.js'
import {createBrokerLiveness} from './broker-liveness.js'

export const JOIN_TOKEN_TTL_MS = 60 * 60 * 1000
const JOIN_PREFIX = 'svc_join_'
const BROKER_SECRET_PREFIX = 'svc_brk_'

export interface BrokerView extends Broker {
  /** Connected through the tunnel to this Hub process right now. */
  connected: boolean
  agents: number
}

/** Whether a broker has a live tunnel on this Hub; the tunnel registry answers it. */
export type ConnectedCheck = (brokerId: string) => boolean

/**
 * Runtime brokers: two-phase registration (a user asks for a join token; the broker trades it
 * for its secret), signed-request verification, and the co-located broker's stable identity.
 */
// A nonce must be remembered for as long as its timestamp can pass the skew check: both sides.
const NONCE_WINDOW_MS = MAX_SKEW_SECONDS * 2 * 1000

/** `secretsKey` seals broker secrets at rest (loaded on first use; see broker-secrets.ts). */
export function createBrokersService(deps: Deps, isConnected: ConnectedCheck, secretsKey: () => Buffer) {
  const {store, clock} = deps
  const nonces = new NonceCache()
  const liveness = createBrokerLiveness(deps)
  const now = () => iso(clock.now())

  const view = async (b: Broker): Promise<BrokerView> => ({...b, connected: isConnected(b.id), agents: await store.agents.countActive({brokerId: b.id})})

  /** Brokers are hub-wide compute: only a system admin adds one. */
  function requireUser(ctx: CallContext) {
    if (ctx.principal.kind !== 'user') throw new AppError('forbidden', 'only users may register brokers')
    if (ctx.bounds) throw new AppError('forbidden', 'a user access token cannot register brokers')
    if (!ctx.principal.systemAdmin) throw new AppError('forbidden', 'only a system admin may register a runtime broker')
    return ctx.principal
  }

  return {
    /** Phase one: a user registers a broker and receives a join token (shown once, 1 h). */
    async register(ctx: CallContext, input: {name: string}): Promise<{broker: BrokerView; joinToken: string; expiresAt: string}> {
      const user = requireUser(ctx)
      const name = input.name.trim()
      if (!name) throw new AppError('validation_error', 'name must not be empty', {fields: [{path: 'name', message: 'must not be empty'}]})
      const t = clock.now()
      const joinToken = JOIN_PREFIX + randomBytes(24).toString('hex')
      const expiresAt = iso(new Date(t.getTime() + JOIN_TOKEN_TTL_MS))
      const broker = await store.transaction(async (tx) => {
        const b = await tx.brokers.insert({id: newId(), name, colocated: false, createdBy: user.id, now: iso(t)})
        await tx.brokers.insertJoinToken({id: newId(), brokerId: b.id, tokenHash: hashSecret(joinToken), now: iso(t), expiresAt})
        return b
      })
      deps.logger.info({brokerId: broker.id, by: user.id}, 'broker registered')
      return {broker: await view(broker), joinToken, expiresAt}
    },

    /** Phase two: the broker trades its join token (once) for its secret. */
    async join(input: {joinToken: string}): Promise<{brokerId: string; secret: string}> {
      const brokerId = await store.brokers.useJoinToken(hashSecret(input.joinToken), now())
      if (!brokerId) throw new AppError('unauthorized', 'join token unknown, expired or already used; register the broker again')
      const secret = BROKER_SECRET_PREFIX + randomBytes(32).toString('hex')
      await store.brokers.setSecret(brokerId, sealBrokerSecret(secretsKey(), brokerId, secret), now())
      deps.logger.info({brokerId}, 'broker joined')
      return {brokerId, secret}
    },

    /**
     * The identity of the Hub's own co-located broker: created once and kept in the database,
     * so the broker keeps its ID and secret across Hub restarts.
     */
    async colocatedIdentity(createdBy: string): Promise<{brokerId: string; secret: string}> {
      const existing = await store.brokers.colocated()
      const secret = BROKER_SECRET_PREFIX + randomBytes(32).toString('hex')
      if (existing?.secret) {
        try {
          return {brokerId: existing.id, secret: openBrokerSecret(secretsKey(), existing.id, existing.secret)}
        } catch {
          // Sealed under a key this Hub no longer has (~/.svc/secrets.key replaced): the Hub
          // starts this broker itself, so it issues a new secret rather than refusing to start.
          deps.logger.warn({brokerId: existing.id}, 'the co-located broker secret does not open with the secrets key; issuing a new one')
          await store.brokers.setSecret(existing.id, sealBrokerSecret(secretsKey(), existing.id, secret), now())
          return {brokerId: existing.id, secret}
        }
      }
      const id = newId()
      const b = await store.brokers.insert({id, name: 'co-located', colocated: true, createdBy, now: now(), secret: sealBrokerSecret(secretsKey(), id, secret)})
      return {brokerId: b.id, secret}
    },

    /**
     * Verifies a signed broker request. Returns the broker ID; throws 401 for a bad signature,
     * a clock outside the skew window, a replayed nonce, or an unknown broker.
     */
    async verifySigned(headers: Record<string, string | string[] | undefined>, method: string, url: string, body: string | Buffer): Promise<string> {
      const brokerId = headers[SIGNATURE_HEADERS.brokerId]
      if (typeof brokerId !== 'string') throw new AppError('unauthorized', 'broker signature headers missing')
      const stored = await store.brokers.secretOf(brokerId)
      if (!stored) throw new AppError('unauthorized', 'unknown broker')
      let secret: string
      try {
        secret = openBrokerSecret(secretsKey(), brokerId, stored)
      } catch {
        // Replicas with different SVC_SECRETS_KEY values, or a replaced key file: the operator's to fix.
        deps.logger.error({brokerId}, 'a broker secret does not open with this Hub\'s secrets key (do all replicas share SVC_SECRETS_KEY?)')
        throw new AppError('unauthorized', 'broker signature refused: the Hub cannot read this broker\'s secret')
      }
      const failure = verifySignature(secret, headers, method, url, body, clock.now().getTime())
      if (failure) throw new AppError('unauthorized', `broker signature refused: ${failure.replace('_', ' ')}`)
      // The process cache turns away a replay to this replica without a write; the database
      // row turns it away on every other replica of the deployment.
      const nonce = String(headers[SIGNATURE_HEADERS.nonce])
      const t = clock.now().getTime()
      if (!nonces.accept(nonce, t) || !(await store.brokers.acceptNonce(nonce, iso(new Date(t)), iso(new Date(t + NONCE_WINDOW_MS))))) {
        throw new AppError('unauthorized', 'broker signature refused: replayed')
      }
      return brokerId
    },

    async list(ctx: CallContext): Promise<BrokerView[]> {
      if (ctx.principal.kind === 'agent') throw new AppError('forbidden', 'agents cannot list brokers')
      return Promise.all((await store.brokers.list()).map(view))
    },

    async get(ctx: CallContext, id: string): Promise<BrokerView> {
      if (ctx.principal.kind === 'agent') throw new AppError('forbidden', 'agents cannot read brokers')
      const b = await store.brokers.get(id)
      if (!b) throw notFound('broker')
      return view(b)
    },

    /** Liveness (leases in the database, broker-liveness.ts): a hello, a liveness report, a closed tunnel. */
    connected: liveness.connected,
    async seen(id: string) {
      await store.brokers.markSeen(id, now())
    },
    disconnected: liveness.disconnected,
    /** Renews this replica's leases and expires lapsed ones on a timer, from Hub start to close. */
    liveness,
  }
}

export type BrokersService = ReturnType<typeof createBrokersService>
