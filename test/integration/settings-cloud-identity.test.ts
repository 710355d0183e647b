import pino from 'pino'
import {afterEach, expect, it} from 'vitest'
import {resolveBootstrap} from '../../src/config/bootstrap.js'
import {systemClock} from '../../src/domain/shared/clock.js'
import {createSettingsService} from '../../src/domain/settings/settings-service.js'
import type {CloudIdentityPolicy} from '../../src/domain/settings/cloud-identity.js'
import {joinFakeBroker, startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {waitFor} from '../helpers/live-hub.js'

const ctx = {principal: {kind: 'user', id: 'admin', systemAdmin: true}, credentialKind: 'dev', requestId: 't'} as never

/** `agent_defaults.default_cloud_identity_mode`: the Assign rule, Passthrough placement, no restart. */
describeEachDialect('settings: default cloud identity', (dialect) => {
  const open: Array<() => Promise<void>> = []
  afterEach(async () => {
    for (const close of open.reverse()) await close().catch(() => {})
    open.length = 0
  })
  const plainHub = async () => {
    const hub = await startTestHub(dialect, {flags: {hosted: false}})
    open.push(() => hub.dispose())
    return hub
  }
  const live = async (files?: Record<string, string>) => {
    const hub = await startFakeBrokerHub(dialect, {files})
    open.push(() => hub.dispose())
    return hub
  }
  /** A second broker, joined and connected, that is not the Hub's co-located one. */
  const otherBroker = async (hub: FakeBrokerHub, runtimes?: string[]) => {
    const fake = await joinFakeBroker(hub, `other-${open.length}`)
    open.push(() => fake.close())
    if (runtimes) {
      // A later hello with other runtimes, as a broker that switched runtime sends on reconnect.
      fake.send({t: 'evt', event: 'hello', data: {version: '1', capabilities: ['agents'], runtimes, agents: []}})
      await waitFor(async () => JSON.stringify((await hub.store.brokers.get(fake.brokerId))?.runtimes) === JSON.stringify(runtimes), 5000, 'runtimes recorded')
    }
    return fake
  }
  const create = async (hub: TestHub, name: string, extra: Record<string, unknown> = {}) => {
    const r = await hub.request('POST', '/api/v1/agents', {body: {name, projectId: 'default', ...extra}})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    return r.body.agent.appliedSettings as Record<string, {value: unknown; from: string}>
  }

  it('Assign is refused with 422 invalid_cloud_identity_mode on this Hub (no verifiable service account, cloud IAM checks not enforced); nothing is written', async () => {
    const hub = await plainHub()
    const before = (await hub.request('GET', '/api/v1/admin/server-config')).body.sections.agent_defaults
    for (const body of [{default_cloud_identity_mode: 'Assign'}, {default_cloud_identity_mode: 'Assign', default_cloud_identity_service_account_id: 'sa@project.iam.example'}]) {
      const r = await hub.request('PUT', '/api/v1/admin/server-config', {body})
      expect(r.status, JSON.stringify(body)).toBe(422)
      expect(r.body.error.code).toBe('invalid_cloud_identity_mode')
      expect(r.body.error.message).toMatch(/cloud_iam_check_mode: enforce/)
      expect(r.body.error.details.problems.length).toBe(2)
    }
    const after = (await hub.request('GET', '/api/v1/admin/server-config')).body
    expect(after.sections.agent_defaults).toEqual(before)
    expect(after.default_cloud_identity_mode ?? null).toBeNull()
  })

  it('with a policy that enforces cloud IAM checks, Assign is accepted only with a verified hub-scoped service account', async () => {
    const hub = await plainHub()
    const accounts: Record<string, {id: string; scope: 'hub' | 'project'; verified: boolean}> = {
      good: {id: 'good', scope: 'hub', verified: true},
      pending: {id: 'pending', scope: 'hub', verified: false},
      narrow: {id: 'narrow', scope: 'project', verified: true},
    }
    const cloudIdentity: CloudIdentityPolicy = {checkMode: () => 'enforce', serviceAccount: (id) => accounts[id] ?? null}
    const settings = createSettingsService({store: hub.store, clock: systemClock, logger: pino({level: 'silent'}), bootstrap: resolveBootstrap({port: 0}, hub.env), env: hub.env, cloudIdentity, schedulePoll: () => () => {}})
    await settings.init()
    open.push(() => settings.close())
    for (const id of ['pending', 'narrow', 'unknown']) {
      await expect(settings.save(ctx, {default_cloud_identity_mode: 'Assign', default_cloud_identity_service_account_id: id})).rejects.toMatchObject({code: 'invalid_cloud_identity_mode'})
    }
    const ok = await settings.save(ctx, {default_cloud_identity_mode: 'Assign', default_cloud_identity_service_account_id: 'good'})
    expect(ok.applied).toEqual(['agent_defaults'])
    expect(settings.agentSettings().defaults).toMatchObject({default_cloud_identity_mode: 'Assign', default_cloud_identity_service_account_id: 'good'})
    // Swapping the account for an unverified one while Assign stays is refused too.
    await expect(settings.save(ctx, {default_cloud_identity_service_account_id: 'pending'})).rejects.toMatchObject({code: 'invalid_cloud_identity_mode'})
  })

  it('an Assign seeded from the settings file is never applied to new agents on this Hub', async () => {
    const hub = await live({'.svc/settings.yaml': 'schema_version: "1"\ndefault_cloud_identity_mode: Assign\ndefault_cloud_identity_service_account_id: sa-1\n'})
    const applied = await create(hub, 'seeded')
    expect(applied.defaultCloudIdentityMode).toEqual({value: null, from: 'none'})
    expect(applied.defaultCloudIdentityServiceAccountId).toEqual({value: null, from: 'none'})
  })

  it('a hub Passthrough applies on the co-located broker only, at once after the save; elsewhere (and on a cluster runtime) it is left unset', async () => {
    const hub = await live()
    const other = await otherBroker(hub)
    expect((await create(hub, 'before')).defaultCloudIdentityMode).toEqual({value: null, from: 'none'})
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {body: {default_cloud_identity_mode: 'Passthrough'}})).status).toBe(200)
    expect((await create(hub, 'colocated')).defaultCloudIdentityMode).toEqual({value: 'Passthrough', from: 'hub'})
    expect((await create(hub, 'elsewhere', {brokerId: other.brokerId})).defaultCloudIdentityMode).toEqual({value: null, from: 'none'})
    // The caller's own choice is not the hub default: kept on any broker.
    expect((await create(hub, 'asked', {brokerId: other.brokerId, cloudIdentityMode: 'Passthrough'})).defaultCloudIdentityMode).toEqual({value: 'Passthrough', from: 'request'})
    // Block from the hub applies anywhere.
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {body: {default_cloud_identity_mode: 'Block'}})).status).toBe(200)
    expect((await create(hub, 'blocked', {brokerId: other.brokerId})).defaultCloudIdentityMode).toEqual({value: 'Block', from: 'hub'})
    // The co-located broker on a cluster runtime: the runtime's default applies.
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {body: {default_cloud_identity_mode: 'Passthrough'}})).status).toBe(200)
    const cluster = await otherBroker(hub, ['kubernetes'])
    hub.services.setColocatedBroker(cluster.brokerId)
    expect((await create(hub, 'cluster', {brokerId: cluster.brokerId})).defaultCloudIdentityMode).toEqual({value: null, from: 'none'})
  })
})
