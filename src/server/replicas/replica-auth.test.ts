import {randomBytes} from 'node:crypto'
import {describe, expect, it} from 'vitest'
import {replicaVerifier, signForReplica} from './replica-auth.js'

/** Replica-to-replica signatures: only the replica a call was signed for accepts it, once. */
describe('replica forwarding signatures', () => {
  const key = randomBytes(32)
  const path = '/internal/v1/replicas/brokers/b1/request'
  const body = JSON.stringify({method: 'agent.keys', params: {agentId: 'a1'}})
  const refused = (fn: () => unknown) => {
    try {
      fn()
    } catch (err) {
      return (err as {code?: string; message: string}).code + ': ' + (err as Error).message
    }
    return 'accepted'
  }

  it('accepts a call signed for this replica once; a replay, another replica, another key, a changed body or path are refused', () => {
    const atA = replicaVerifier(() => key, () => 'replica-a')
    const headers = signForReplica(key, 'replica-b', 'replica-a', 'POST', path, body)
    expect(atA(headers, 'POST', path, body)).toBe('replica-b')
    expect(refused(() => atA(headers, 'POST', path, body))).toMatch(/^unauthorized: .*replayed/)
    const fresh = () => signForReplica(key, 'replica-b', 'replica-a', 'POST', path, body)
    expect(refused(() => replicaVerifier(() => key, () => 'replica-c')(fresh(), 'POST', path, body))).toMatch(/^unauthorized: .*bad signature/)
    expect(refused(() => replicaVerifier(() => randomBytes(32), () => 'replica-a')(fresh(), 'POST', path, body))).toMatch(/^unauthorized/)
    expect(refused(() => atA(fresh(), 'POST', path, body.replace('a1', 'a2')))).toMatch(/^unauthorized/)
    expect(refused(() => atA(fresh(), 'POST', path.replace('b1', 'b2'), body))).toMatch(/^unauthorized/)
  })

  it('refuses a call without the replica header or signature headers (an agent\'s bearer token is not one)', () => {
    const atA = replicaVerifier(() => key, () => 'replica-a')
    expect(refused(() => atA({authorization: 'Bearer svc_agt_x'}, 'POST', path, body))).toMatch(/^unauthorized: replica signature headers missing/)
    expect(refused(() => atA({'x-svc-replica': 'replica-b'}, 'POST', path, body))).toMatch(/^unauthorized/)
  })
})
