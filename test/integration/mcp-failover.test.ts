import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {AppError} from '../../src/api/app-error.js'
import {mayTryNext} from '../../src/api/replica-failover.js'
import {cliEnv, freePort} from '../helpers/cli.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'
import {connectSvcMcp} from '../helpers/mcp-client.js'

/**
 * `svc mcp` inside an agent of several replicas (CONTRACT.md "Hosted at scale"): its
 * SVC_HUB_ENDPOINT is a replica that is gone (nothing listens there), SVC_HUB_ENDPOINTS lists
 * it and a live Hub. The real CLI process, driven by the SDK's stdio client, reaches the live
 * one for reads, writes and the event stream of agent_wait, as the agent's hooks do.
 */
describe('svc mcp: tries the Hub URLs of the agent in turn', () => {
  let hub: LiveHub
  let home: string
  let client: Client
  let lead: any
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = (await client.callTool({name, arguments: args})) as {isError?: boolean; content: Array<{type: string; text: string}>}
    return {isError: !!r.isError, body: JSON.parse(r.content[0]!.text)}
  }

  beforeAll(async () => {
    hub = await startLiveHub('sqlite')
    home = mkdtempSync(join(tmpdir(), 'svc-mcp-failover-'))
    const projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'mcp-failover'}})).body.project.id
    lead = (await hub.request('POST', '/api/v1/agents', {body: {name: 'lead', projectId, harnessConfig: 'shell', role: 'full'}})).body.agent
    const token = (await hub.services.agentTokens.mint((await hub.store.agents.get(lead.id))!)).token
    const gone = `http://127.0.0.1:${await freePort()}`
    const env = cliEnv(home, {SVC_HUB_ENDPOINT: gone, SVC_HUB_ENDPOINTS: `${gone},${hub.url}`, SVC_AUTH_TOKEN: token, SVC_AGENT_ID: lead.id, SVC_PROJECT_ID: projectId})
    client = await connectSvcMcp(env, home)
  }, 120_000)
  afterAll(async () => {
    await client?.close()
    await hub?.dispose()
    if (home) rmSync(home, {recursive: true, force: true})
  })

  it('lists, creates a child and waits for it through the replica that answers', async () => {
    const listed = await call('agent_list')
    expect(listed.isError, JSON.stringify(listed.body)).toBe(false)
    expect(listed.body.agents.map((a: {name: string}) => a.name)).toEqual(['lead'])
    const created = await call('agent_create', {name: 'helper', harness: 'shell'})
    expect(created.isError, JSON.stringify(created.body)).toBe(false)
    expect(created.body.agent).toMatchObject({name: 'helper', phase: 'running', parent: {id: lead.id}})
    expect((await hub.request('POST', `/api/v1/agents/${created.body.agent.id}/stop`, {body: {}})).status).toBe(200)
    const waited = await call('agent_wait', {agent: 'helper', for: 'done'})
    expect(waited.isError, JSON.stringify(waited.body)).toBe(false)
    expect(waited.body.agent).toMatchObject({id: created.body.agent.id, phase: 'stopped'})
  }, 120_000)

  it('a write that may have reached a replica is not sent again; a read or an unopened connection moves on', () => {
    const unreachable = (cause?: string) => new AppError('hub_unreachable', 'x', {endpoint: 'http://a', ...(cause && {cause})})
    expect(mayTryNext(unreachable('ECONNREFUSED'), 'POST')).toBe(true)
    expect(mayTryNext(unreachable('ECONNRESET'), 'POST')).toBe(false)
    expect(mayTryNext(unreachable(), 'POST')).toBe(false)
    expect(mayTryNext(unreachable(), 'GET')).toBe(true)
    expect(mayTryNext(new AppError('internal_error', 'proxy', {status: 502}), 'GET')).toBe(true)
    expect(mayTryNext(new AppError('internal_error', 'proxy', {status: 502}), 'POST')).toBe(false)
    // A replica that could not open a database connection ran nothing: a read goes on, a write does not.
    expect(mayTryNext(new AppError('not_ready', 'the database does not answer'), 'GET')).toBe(true)
    expect(mayTryNext(new AppError('not_ready', 'the database does not answer'), 'POST')).toBe(false)
    // The Hub's own answer (an envelope) is the answer, whichever replica gave it.
    expect(mayTryNext(new AppError('broker_unavailable', 'no broker', {sent: false}), 'GET')).toBe(false)
  })
})
