import {randomBytes} from 'node:crypto'
import {expect, it} from 'vitest'
import {signRequest} from '../../src/api/broker-signing.js'
import {isSealed} from '../../src/domain/secrets/sealing.js'
import {describeEachDialect, type TestHub} from '../helpers/hub.js'
import {capturingLogger, hubDbPerTest} from '../helpers/restart-hub.js'

/**
 * Issue 22 item 12: broker HMAC secrets are sealed at rest with the Hub's secrets key (as
 * project secrets are); the Hub still verifies signatures, and a plaintext row an earlier
 * release wrote is sealed at the next start. Restarts keep the key through SVC_SECRETS_KEY.
 */
describeEachDialect('broker secrets at rest', (dialect) => {
  const run = hubDbPerTest(dialect)
  const env = {SVC_SECRETS_KEY: randomBytes(32).toString('hex')}

  const joined = async (hub: TestHub, name: string) => {
    const r = await hub.request('POST', '/api/v1/brokers/register', {body: {name}})
    const j = await hub.request('POST', '/api/v1/brokers/join', {body: {joinToken: r.body.joinToken}, token: null})
    expect(j.status).toBe(200)
    return j.body as {brokerId: string; secret: string}
  }
  const signedMe = (hub: TestHub, brokerId: string, secret: string) =>
    hub.request('GET', '/api/v1/auth/me', {token: null, headers: signRequest(brokerId, secret, 'GET', '/api/v1/auth/me', '')})

  it('the stored column is sealed, not the secret; the broker signs before and after a restart', async () => {
    let hub = await run.start({env})
    const {brokerId, secret} = await joined(hub, 'edge')
    const stored = (await hub.store.brokers.secretOf(brokerId))!
    expect(stored).not.toContain(secret)
    expect(stored).not.toContain(secret.slice('svc_brk_'.length))
    expect(isSealed(stored)).toBe(true)
    expect((await signedMe(hub, brokerId, secret)).body.principal).toEqual({kind: 'broker', id: brokerId})

    hub = await run.start({env})
    expect((await signedMe(hub, brokerId, secret)).status).toBe(200)
  })

  it('the co-located broker identity is sealed too and stays the same across starts', async () => {
    let hub = await run.start({env})
    const first = await hub.services.brokers.colocatedIdentity('system')
    expect(isSealed((await hub.store.brokers.secretOf(first.brokerId))!)).toBe(true)
    hub = await run.start({env})
    expect(await hub.services.brokers.colocatedIdentity('system')).toEqual(first)
  })

  it('a sealed secret copied into another broker row does not verify (bound to its broker)', async () => {
    const hub = await run.start({env})
    const a = await joined(hub, 'a')
    const b = await joined(hub, 'b')
    await hub.store.brokers.replaceSecret(b.brokerId, (await hub.store.brokers.secretOf(b.brokerId))!, (await hub.store.brokers.secretOf(a.brokerId))!)
    const r = await signedMe(hub, b.brokerId, a.secret)
    expect(r.status).toBe(401)
    expect(r.body.error.code).toBe('unauthorized')
  })

  it('plaintext rows of an earlier release are sealed at the next start, once, and still verify', async () => {
    let hub = await run.start({env})
    const edge = await joined(hub, 'edge-old')
    const colocated = await hub.services.brokers.colocatedIdentity('system')
    // What an earlier release stored: the secrets themselves.
    for (const x of [edge, colocated]) await hub.store.brokers.setSecret(x.brokerId, x.secret, new Date().toISOString())
    expect(await hub.store.brokers.secretOf(edge.brokerId)).toBe(edge.secret)

    const log = capturingLogger()
    hub = await run.start({env, logger: log.logger})
    for (const x of [edge, colocated]) {
      const stored = (await hub.store.brokers.secretOf(x.brokerId))!
      expect(isSealed(stored)).toBe(true)
      expect(stored).not.toContain(x.secret.slice('svc_brk_'.length))
    }
    expect(log.lines.filter((l) => l.msg.startsWith('encrypted broker secrets'))).toMatchObject([{brokers: 2}])
    expect((await signedMe(hub, edge.brokerId, edge.secret)).status).toBe(200)
    expect(await hub.services.brokers.colocatedIdentity('system')).toEqual(colocated)

    // Idempotent: the next start finds nothing to seal and leaves the sealed values as they are.
    const sealed = await hub.store.brokers.secretOf(edge.brokerId)
    const again = capturingLogger()
    hub = await run.start({env, logger: again.logger})
    expect(await hub.store.brokers.secretOf(edge.brokerId)).toBe(sealed)
    expect(again.lines.filter((l) => l.msg.startsWith('encrypted broker secrets'))).toEqual([])
    expect((await signedMe(hub, edge.brokerId, edge.secret)).status).toBe(200)
  })
})
