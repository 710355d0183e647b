import {afterAll, beforeAll, expect, it} from 'vitest'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect} from '../helpers/hub.js'

/**
 * Claude Code's HTTP hooks (`POST /api/v1/agents/:id/hooks/claude`, domain/agents/hook-reports.ts):
 * the body is Claude Code's own hook input, mapped by the Hub as `svc hook` maps it. Only the
 * agent's own token reports on it, also past the token's expiry (Claude Code cannot pick up a
 * refreshed token), never once revoked; only the tool-call events are taken.
 */
describeEachDialect('Claude Code HTTP hooks', (dialect) => {
  let hub: FakeBrokerHub
  // The Hub's clock, moved forward to expire tokens.
  let offset = 0
  beforeAll(async () => {
    hub = await startFakeBrokerHub(dialect, {clock: {now: () => new Date(Date.now() + offset)}})
  })
  afterAll(() => hub?.dispose())
  const get = async (id: string) => (await hub.request('GET', `/api/v1/agents/${id}`)).body.agent
  const create = async (name: string) => (await hub.request('POST', '/api/v1/agents', {body: {projectId: 'default', name, harnessConfig: 'shell'}})).body.agent.id as string
  const hook = (id: string, token: string | null, body: Record<string, unknown>) =>
    hub.request('POST', `/api/v1/agents/${id}/hooks/claude`, {token: token as string, body: {session_id: 's', transcript_path: '/nonexistent', cwd: '/tmp', ...body}})
  const preToolUse = {hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: {command: 'npm test'}}

  it('the agent\'s own token: its tool calls show at once; the answer is an empty hook output', async () => {
    const id = await create('http-hooks')
    const token = hub.tokenOf(id)
    const r = await hook(id, token, preToolUse)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({})
    expect(await get(id)).toMatchObject({activity: 'executing', detail: 'Bash: npm test'})
    expect((await hook(id, token, {hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: {command: 'npm test'}, tool_response: {}})).status).toBe(200)
    expect(await get(id)).toMatchObject({activity: 'thinking', detail: ''})
  })

  it('refuses another agent\'s token, a person\'s credential and no credential (401), and changes nothing', async () => {
    const id = await create('victim')
    const other = await create('intruder')
    expect((await hook(id, hub.tokenOf(id), {hook_event_name: 'PostToolUse', tool_name: 'Read'})).status).toBe(200)
    const before = await get(id)
    for (const token of [hub.tokenOf(other), hub.config.devToken!, '', 'svc_agt_forged']) {
      const r = await hook(id, token, {...preToolUse, tool_input: {command: 'rm -rf / # by the intruder'}})
      expect(r.status, token).toBe(401)
      expect(r.body.error.code).toBe('unauthorized')
    }
    expect(await get(id)).toEqual(before)
  })

  it('takes only the tool-call events (400 for the ones that run as commands in the sandbox)', async () => {
    const id = await create('events')
    const token = hub.tokenOf(id)
    expect((await hook(id, token, preToolUse)).status).toBe(200)
    for (const event of ['Stop', 'UserPromptSubmit', 'PermissionRequest', 'Notification', undefined]) {
      const r = await hook(id, token, {hook_event_name: event, tool_name: 'Bash'})
      expect(r.status, String(event)).toBe(400)
      expect(r.body.error.code).toBe('invalid_request')
    }
    expect(await get(id)).toMatchObject({activity: 'executing', detail: 'Bash: npm test'})
  })

  it('an expired token still reports its own live agent; once stopped (tokens revoked) it is refused at once', async () => {
    const id = await create('long-runner')
    const token = hub.tokenOf(id)
    offset = 25 * 60 * 60 * 1000
    try {
      // The ordinary status route refuses it: the hook route exists because Claude Code cannot refresh it.
      expect((await hub.request('POST', `/api/v1/agents/${id}/status`, {token, body: {activity: 'thinking'}})).status).toBe(401)
      expect((await hook(id, token, preToolUse)).status).toBe(200)
      expect(await get(id)).toMatchObject({activity: 'executing', detail: 'Bash: npm test'})
      expect((await hub.request('POST', `/api/v1/agents/${id}/stop`)).body.agent.phase).toBe('stopped')
      const before = await get(id)
      expect((await hook(id, token, {hook_event_name: 'PostToolUse', tool_name: 'Bash'})).status).toBe(401)
      expect(await get(id)).toEqual(before)
    } finally {
      offset = 0
    }
  })
})
