import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser, type TestUser} from '../helpers/users.js'

/**
 * Issue 22 item 9: a JSON body nested deeper than 64 levels is 400 validation_error on every
 * route, refused before anything walks it (schema validation, raw-field scan, storage). A body
 * nested 100,000 deep used to be a 500 for any signed-in user.
 */
const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
const DEEP = nested(100_000)

describeEachDialect('JSON bodies nested too deep', (dialect) => {
  let hub: TestHub
  let alice: TestUser
  beforeAll(async () => {
    hub = await startTestHub(dialect)
    alice = await createUser(hub)
  })
  afterAll(() => hub?.dispose())

  const send = async (method: string, url: string, payload: string, token: string) => {
    const res = await hub.app.inject({method: method as 'POST', url, payload, headers: {authorization: `Bearer ${token}`, 'content-type': 'application/json'}})
    return {status: res.statusCode, body: res.json(), requestId: res.headers['x-request-id']}
  }

  it.each([
    ['POST', '/api/v1/agents', `{"name":"deep","projectId":"default","telemetry":${DEEP}}`],
    ['PUT', '/api/v1/admin/server-config', `{"telemetry":${DEEP}}`],
    ['POST', '/api/v1/projects/register', `{"name":${DEEP}}`],
    ['POST', '/api/v1/agents/nobody/message', `{"message":${DEEP}}`],
    ['PUT', '/api/v1/projects/default/settings', `{"defaultMaxTurns":${DEEP}}`],
    ['POST', '/api/v1/auth/tokens', DEEP],
  ])('%s %s is 400 validation_error naming the limit', async (method, url, payload) => {
    for (const token of [hub.devToken, alice.token]) {
      const res = await send(method, url, payload, token)
      expect(res.status).toBe(400)
      expect(res.body.error).toMatchObject({code: 'validation_error', requestId: res.requestId, details: {maxDepth: 64}})
      expect(res.body.error.message).toMatch(/deeper than 64/)
    }
  })

  it('nothing was created by the refused bodies', async () => {
    const agents = await hub.request('GET', '/api/v1/agents')
    expect(agents.body.agents.map((a: {name: string}) => a.name)).not.toContain('deep')
  })

  it('64 levels are accepted by the parser; brackets inside strings do not count', async () => {
    const ok = await send('POST', '/api/v1/agents', `{"name":"d64","projectId":"default","harnessConfig":"shell","telemetry":${nested(62)}}`, hub.devToken)
    expect(ok.body.error?.details?.maxDepth).toBeUndefined()
    const brackets = await send('POST', '/api/v1/projects/register', JSON.stringify({name: '{['.repeat(33) + '"\\'}), hub.devToken)
    expect(brackets.body.error).toBeUndefined()
    expect(brackets.body.project.name).toBe('{['.repeat(33) + '"\\')
  })
})
