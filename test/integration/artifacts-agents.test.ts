import {Readable} from 'node:stream'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {AppError} from '../../src/api/app-error.js'
import {SCOPE_ARTIFACT_READ, SCOPE_ARTIFACT_WRITE} from '../../src/domain/artifacts/access.js'
import {createArtifactsService, type ArtifactsService} from '../../src/domain/artifacts/artifacts-service.js'
import type {CallContext} from '../../src/domain/authz/context.js'
import {systemClock} from '../../src/domain/shared/clock.js'
import {makeAgent, sha256} from '../helpers/artifacts.js'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'

/**
 * Agent rules of spec "Authentication" 8, on the real service and store with CallContexts built
 * directly (agent tokens are minted by the agents capability).
 */
describeEachDialect('artifacts: agent callers', (dialect) => {
  let hub: TestHub
  let svc: ArtifactsService
  let home: string
  let other: string

  const agent = (id: string, projectId: string, scopes?: string[]): CallContext => ({
    principal: {kind: 'agent', id, projectId},
    credentialKind: 'agent',
    requestId: 'test',
    ...(scopes && {scopes: new Set(scopes)}),
  })
  const dev = (): CallContext => ({principal: {kind: 'user', id: 'dev-user', email: 'dev@localhost', displayName: 'Developer', systemAdmin: true}, credentialKind: 'dev', requestId: 'test'})
  const upload = (text: string, extra: {scope?: string; sha?: string} = {}) => ({name: 'out.txt', body: Readable.from([Buffer.from(text)]), size: Buffer.byteLength(text), sha256: extra.sha ?? sha256(text), scope: extra.scope})
  const code = async (p: Promise<unknown>) => {
    try {
      await p
      return 'ok'
    } catch (err) {
      if (err instanceof AppError) return `${err.status} ${err.code}`
      throw err
    }
  }
  const RW = [SCOPE_ARTIFACT_READ, SCOPE_ARTIFACT_WRITE]

  beforeAll(async () => {
    hub = await startTestHub(dialect)
    svc = createArtifactsService({store: hub.store, clock: systemClock, logger: hub.logger, config: hub.config, blobs: hub.blobs, maxFileBytes: 1024})
    home = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'home'}})).body.project.id
    other = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'other'}})).body.project.id
    // Real agents with recorded delegation edges: agents' artifact permissions walk their chain.
    for (const [id, projectId] of [['ag1', home], ['ag2', home], ['ag3', other], ['ag4', home], ['ag5', home]]) await makeAgent(hub.store, projectId, 'full', id)
  })
  afterAll(() => hub?.dispose())

  it('an agent with read and write publishes into its own project by default, owning the artifact', async () => {
    const v = await svc.publish(agent('ag1', home, RW), upload('from an agent'))
    expect(v.artifact).toMatchObject({owner: {kind: 'agent', id: 'ag1'}, projectId: home, currentVersion: 1})
    expect(v.url).toContain(`/projects/${home}/artifacts/${v.artifact.id}`)
  })

  it('publishing into another project is 403; without write scope 403; without read scope 401', async () => {
    expect(await code(svc.publish(agent('ag1', home, RW), upload('x', {scope: other})))).toBe('403 forbidden')
    expect(await code(svc.publish(agent('ag1', home, [SCOPE_ARTIFACT_READ]), upload('x')))).toBe('403 forbidden')
    expect(await code(svc.publish(agent('ag1', home, [SCOPE_ARTIFACT_WRITE]), upload('x')))).toBe('401 unauthorized')
    expect(await code(svc.publish(agent('ag1', home), upload('x')))).toBe('401 unauthorized')
  })

  it('reads: home-project agents with the read scope; everyone else, and any agent without it, 404', async () => {
    const v = await svc.publish(dev(), upload('user file', {scope: home}))
    const id = v.artifact.id
    expect((await svc.get(agent('ag2', home, [SCOPE_ARTIFACT_READ]), id)).artifact.id).toBe(id)
    expect(await code(svc.get(agent('ag2', home, [SCOPE_ARTIFACT_WRITE]), id))).toBe('404 not_found')
    expect(await code(svc.get(agent('ag2', home), id))).toBe('404 not_found')
    expect(await code(svc.get(agent('ag3', other, RW), id))).toBe('404 not_found')
    expect(await code(svc.file(agent('ag3', other, RW), id, null, 'out.txt', {preferRedirect: false}))).toBe('404 not_found')
  })

  it('shared with the agent\'s project: readable with the read scope, still 404 without it', async () => {
    const v = await svc.publish(dev(), upload('shared', {scope: home}))
    await svc.grant(dev(), v.artifact.id, {projectId: other})
    expect((await svc.get(agent('ag3', other, [SCOPE_ARTIFACT_READ]), v.artifact.id)).artifact.id).toBe(v.artifact.id)
    expect(await code(svc.get(agent('ag3', other, [SCOPE_ARTIFACT_WRITE]), v.artifact.id))).toBe('404 not_found')
  })

  it('the owning agent publishes new versions but never deletes or shares; other agents may not version', async () => {
    const owner = agent('ag4', home, RW)
    const v = await svc.publish(owner, upload('v1'))
    const id = v.artifact.id
    const v2 = await svc.publishVersion(owner, id, {...upload('v2'), name: 'out.txt'})
    expect(v2.version.seq).toBe(2)
    expect(await code(svc.delete(owner, id))).toBe('403 forbidden')
    expect(await code(svc.grant(owner, id, {projectId: other}))).toBe('403 forbidden')
    expect(await code(svc.publishVersion(agent('ag5', home, RW), id, upload('v3')))).toBe('403 forbidden')
    expect(await code(svc.publishVersion(agent('ag4', home, [SCOPE_ARTIFACT_READ]), id, upload('v3')))).toBe('403 forbidden')
    expect(await code(svc.publishVersion(agent('ag4', home, [SCOPE_ARTIFACT_WRITE]), id, upload('v3')))).toBe('401 unauthorized')
    // Its user (here a system admin reading the home project) can read what the agent made.
    expect((await svc.get(dev(), id)).artifact.currentVersion).toBe(2)
  })

  it('size and digest rules apply to agents too: 413 over the limit, 400 on mismatch', async () => {
    expect(await code(svc.publish(agent('ag1', home, RW), upload('x'.repeat(1025))))).toBe('413 file_too_large')
    expect(await code(svc.publish(agent('ag1', home, RW), upload('abc', {sha: sha256('abd')})))).toBe('400 sha256_mismatch')
  })
})
