import {createHmac} from 'node:crypto'
import {AppError} from '../../api/app-error.js'
import {NonceCache, SIGNATURE_HEADERS, signRequest, verifySignature} from '../../api/broker-signing.js'

/** The header naming the replica that signed a forwarded request. */
export const REPLICA_HEADER = 'x-svc-replica'

/**
 * Replica-to-replica calls are signed like a broker's requests (HMAC over method, path, query,
 * time, nonce and body hash), with a secret derived from the deployment's secrets key (every
 * replica must share SVC_SECRETS_KEY already: broker secrets are sealed with it) and from the
 * id of the replica the call is for. So a call signed for replica A verifies on A only, and A's
 * in-memory nonce cache is enough to refuse a replay. Nothing an agent holds (its token, files
 * in its workspace or HOME) derives this secret.
 */
export function replicaSecret(secretsKey: Buffer, targetReplicaId: string): string {
  return createHmac('sha256', secretsKey).update(`svc replica forwarding v1\n${targetReplicaId}`).digest('hex')
}

/** The headers of a call from replica `fromId` to replica `toId`. */
export function signForReplica(secretsKey: Buffer, fromId: string, toId: string, method: string, pathWithQuery: string, body = ''): Record<string, string> {
  const headers = signRequest(fromId, replicaSecret(secretsKey, toId), method, pathWithQuery, body)
  delete headers[SIGNATURE_HEADERS.brokerId]
  return {...headers, [REPLICA_HEADER]: fromId}
}

/** Verifies calls made to this replica (`selfId()`); throws 401 `unauthorized` otherwise. */
export function replicaVerifier(secretsKey: () => Buffer, selfId: () => string) {
  const nonces = new NonceCache()
  return (headers: Record<string, string | string[] | undefined>, method: string, url: string, body: string): string => {
    const from = headers[REPLICA_HEADER]
    const self = selfId()
    // Before this replica is published it has no id, and no call can be for it.
    if (typeof from !== 'string' || !from || !self) throw new AppError('unauthorized', 'replica signature headers missing')
    const secret = replicaSecret(secretsKey(), self)
    const failure = verifySignature(secret, headers, method, url, body)
    if (failure) throw new AppError('unauthorized', `replica signature refused: ${failure.replace('_', ' ')}`)
    if (!nonces.accept(String(headers[SIGNATURE_HEADERS.nonce]))) throw new AppError('unauthorized', 'replica signature refused: replayed')
    return from
  }
}
