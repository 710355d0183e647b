import {afterAll, beforeAll, expect, it} from 'vitest'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'
import {movableClock} from '../helpers/sign-in-hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

const DAY = 86_400_000

/**
 * Issue 30 item 4: `svc agent delete` says the output is kept. A deleted agent's archived output
 * stays readable by its ID (not its name, which a new agent may take) for
 * `server.retention.deleted_agent_logs` (default 7 days) to whoever could read it before; then
 * it is 404 and the archive is pruned (at the next deletion). The Hub's clock is movable.
 */
describeEachDialect('logs of deleted agents', (dialect) => {
  let hub: FakeBrokerHub
  const clock = movableClock()
  let projectId: string
  let stranger: TestUser

  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect, {clock})
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'gamma'}})).body.project.id
    await hub.request('POST', '/api/v1/projects/register', {body: {name: 'delta'}})
    stranger = await createUser(hub)
  })
  afterAll(() => hub?.dispose())

  const create = async (name: string) => (await hub.request('POST', '/api/v1/agents', {body: {projectId, name}})).body.agent as {id: string}
  const logs = (path: string, token?: string) => hub.request('GET', path, {...(token !== undefined && {token})})

  it('readable by ID (both route forms, raw too) within the retention; not by name, not from another project, not by a stranger', async () => {
    const a = await create('gone')
    expect((await hub.request('DELETE', `/api/v1/agents/${a.id}`)).status).toBe(200)
    expect((await hub.request('GET', `/api/v1/agents/${a.id}`)).status).toBe(404)
    const shown = await logs(`/api/v1/agents/${a.id}/logs`)
    expect(shown.status).toBe(200)
    expect(shown.body).toBe(`final output of ${a.id}`)
    expect((await logs(`/api/v1/projects/gamma/agents/${a.id}/logs`)).body).toBe(`final output of ${a.id}`)
    expect((await logs(`/api/v1/agents/${a.id}/logs?raw=true`)).body).toBe(`final output of ${a.id}\n`)
    // Its name is free again: it does not name the deleted agent.
    expect((await logs(`/api/v1/projects/gamma/agents/gone/logs`)).status).toBe(404)
    expect((await logs(`/api/v1/projects/delta/agents/${a.id}/logs`)).status).toBe(404)
    expect((await logs(`/api/v1/agents/${a.id}/logs`, stranger.token)).status).toBe(404)
    // Still readable just before the retention ends.
    clock.advance(7 * DAY - 60_000)
    expect((await logs(`/api/v1/agents/${a.id}/logs`)).status).toBe(200)
    clock.advance(-(7 * DAY - 60_000))
  })

  it('after the retention: 404 not_found, and the next deletion prunes the archive', async () => {
    const old = await create('old')
    expect((await hub.request('DELETE', `/api/v1/agents/${old.id}`)).status).toBe(200)
    expect(await hub.store.agents.logArchive(old.id)).toBe(`final output of ${old.id}\n`)
    clock.advance(7 * DAY + 60_000)
    try {
      const late = await logs(`/api/v1/agents/${old.id}/logs`)
      expect(late.status).toBe(404)
      expect(late.body.error.code).toBe('not_found')
      // Kept until something prunes it; a deletion does.
      expect(await hub.store.agents.logArchive(old.id)).not.toBeNull()
      const next = await create('next')
      expect((await hub.request('DELETE', `/api/v1/agents/${next.id}`)).status).toBe(200)
      expect(await hub.store.agents.logArchive(old.id)).toBeNull()
      // The one just deleted keeps its output.
      expect((await logs(`/api/v1/agents/${next.id}/logs`)).body).toBe(`final output of ${next.id}`)
    } finally {
      clock.advance(-(7 * DAY + 60_000))
    }
  })
})
