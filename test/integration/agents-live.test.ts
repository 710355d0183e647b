import WebSocket from 'ws'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect} from '../helpers/hub.js'
import {agentProcessEnv, startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {createUser} from '../helpers/users.js'

/**
 * Agents on a real co-located broker: the `shell` harness in a tmux session on this Hub's own
 * tmux server (its TMUX_TMPDIR), commanded through the tunnel.
 */
describeEachDialect('agents: on the co-located broker (local runtime, tmux)', (dialect) => {
  let hub: LiveHub
  let agent: {id: string; name: string; projectId: string}
  let token: string

  beforeAll(async () => {
    hub = await startLiveHub(dialect)
  })
  afterAll(() => hub?.dispose())

  const session = () => `svc-${agent.id}`
  const pane = () => hub.tmux('capture-pane', '-p', '-t', `=${session()}:`).stdout

  /** A WebSocket to a Hub stream, collecting the binary frames as text and the text frames as JSON. */
  async function stream(path: string, tokenOverride?: string) {
    const url = new URL(path, hub.url)
    url.protocol = 'ws:'
    const ws = new WebSocket(url, {headers: {authorization: `Bearer ${tokenOverride ?? hub.devToken}`}})
    const state = {text: '', control: [] as any[], closed: false}
    ws.on('message', (data, isBinary) => {
      if (isBinary) state.text += data.toString()
      else state.control.push(JSON.parse(data.toString()))
    })
    ws.on('close', () => (state.closed = true))
    const status = await new Promise<number>((resolve) => {
      ws.once('open', () => resolve(101))
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
      ws.once('error', () => resolve(0))
    })
    return {ws, state, status}
  }

  it('create with harness shell reaches phase running on the local runtime, in a tmux session carrying the agent environment', async () => {
    const r = await hub.request('POST', '/api/v1/agents', {body: {name: 'demo', projectId: 'default', harnessConfig: 'shell'}})
    expect(r.status).toBe(201)
    expect(r.body.agent).toMatchObject({name: 'demo', phase: 'running', runtime: 'local', brokerId: hub.brokerId, createdBy: {kind: 'user', id: 'dev-user'}})
    agent = r.body.agent
    expect(hub.tmux('has-session', '-t', `=${session()}`).code).toBe(0)
    await waitFor(() => agentProcessEnv(hub.tmuxTmpdir, agent.id).SVC_AGENT_ID, 10_000, 'the harness environment')
    const env = agentProcessEnv(hub.tmuxTmpdir, agent.id)
    token = env.SVC_AUTH_TOKEN
    expect(token).toMatch(/^svc_agt_/)
    expect(env).toMatchObject({SVC_AGENT_ID: agent.id, SVC_AGENT_NAME: 'demo', SVC_PROJECT_ID: agent.projectId, SVC_HUB_ENDPOINT: hub.url})
    // The token is not left in tmux's own environment.
    expect(hub.tmux('show-environment', '-t', session(), 'SVC_AUTH_TOKEN').stdout).not.toContain('svc_agt_')
    const broker = (await hub.request('GET', `/api/v1/brokers/${hub.brokerId}`)).body.broker
    expect(broker).toMatchObject({colocated: true, status: 'online', connected: true, runtimes: ['local'], agents: 1})
  })

  it('the agent token from its session: whoami is kind agent; status reports change its activity', async () => {
    const me = await hub.request('GET', '/api/v1/auth/me', {token})
    expect(me.body).toMatchObject({principal: {kind: 'agent', id: agent.id}, credentialKind: 'agent'})
    const r = await hub.request('POST', `/api/v1/agents/${agent.id}/status`, {token, body: {activity: 'thinking', detail: 'pondering'}})
    expect(r.status).toBe(200)
    expect((await hub.request('GET', `/api/v1/projects/default/agents/demo`)).body.agent).toMatchObject({phase: 'running', activity: 'thinking', detail: 'pondering'})
  })

  it('attach over WebSocket: typing reaches the shell and its output comes back; a resize message is accepted', async () => {
    const {ws, state, status} = await stream(`/api/v1/agents/${agent.id}/attach?cols=100&rows=30`)
    expect(status).toBe(101)
    ws.send(JSON.stringify({type: 'resize', cols: 120, rows: 40}))
    ws.send(Buffer.from('echo hi-from-attach\r'), {binary: true})
    await waitFor(() => state.text.includes('hi-from-attach'), 10_000, 'attach output')
    await waitFor(() => /^hi-from-attach$/m.test(pane()), 10_000, 'the command ran in the pane')
    await waitFor(() => hub.tmux('display-message', '-p', '-t', `=${session()}:`, '#{window_width}x#{window_height}').stdout.trim() === '120x40', 10_000, 'the resize applied')
    // JSON input frames are typed too.
    ws.send(JSON.stringify({type: 'input', data: 'echo via-json\r'}))
    await waitFor(() => /^via-json$/m.test(pane()), 10_000, 'JSON input ran')
    expect(state.control).toEqual([])
    ws.close()
    await waitFor(() => state.closed, 5000, 'closed')
    // Detaching leaves the agent running.
    expect(hub.tmux('has-session', '-t', `=${session()}`).code).toBe(0)
  })

  it('attach is refused before the upgrade: without credentials 401, a member without agent.attach 403, an unknown agent 404', async () => {
    expect((await stream(`/api/v1/agents/${agent.id}/attach`, 'svc_nope')).status).toBe(401)
    const member = await createUser(hub)
    const {iso} = await import('../../src/domain/shared/clock.js')
    await hub.store.projects.setMember(agent.projectId, member.user.id, 'member', iso(new Date()))
    expect((await stream(`/api/v1/agents/${agent.id}/attach`, member.token)).status).toBe(403)
    expect((await stream(`/api/v1/agents/no-such/attach`)).status).toBe(404)
    // A plain GET is told to upgrade.
    expect((await hub.request('GET', `/api/v1/agents/${agent.id}/attach`)).status).toBe(426)
  })

  it('logs: the text so far while running, and live output over a WebSocket follow', async () => {
    const text = await hub.request('GET', `/api/v1/agents/${agent.id}/logs`)
    expect(text.status).toBe(200)
    expect(text.headers['content-type']).toMatch(/^text\/plain/)
    expect(text.body).toContain('hi-from-attach')

    const {ws, state, status} = await stream(`/api/v1/projects/default/agents/demo/logs`)
    expect(status).toBe(101)
    await waitFor(() => state.text.includes('hi-from-attach'), 10_000, 'logs so far')
    hub.tmux('send-keys', '-t', `=${session()}:`, 'echo followed-line', 'Enter')
    await waitFor(() => state.text.includes('followed-line'), 10_000, 'followed output')
    // The follow stream is read-only: bytes sent are ignored.
    ws.send(Buffer.from('echo should-not-run\r'), {binary: true})
    await new Promise((r) => setTimeout(r, 300))
    expect(pane()).not.toMatch(/^should-not-run$/m)
    ws.close()
  })

  it('stop keeps the output (archived), start runs it again in a new session, restart too', async () => {
    const stop = await hub.request('POST', `/api/v1/agents/${agent.id}/stop`, {body: {}})
    expect(stop.body.agent.phase).toBe('stopped')
    expect(hub.tmux('has-session', '-t', `=${session()}`).code).not.toBe(0)
    const archived = await hub.request('GET', `/api/v1/agents/${agent.id}/logs`)
    expect(archived.body).toContain('followed-line')
    expect((await hub.request('GET', '/api/v1/auth/me', {token})).status).toBe(401)
    // Streams need a running agent.
    const closed = await stream(`/api/v1/agents/${agent.id}/attach`)
    expect(closed.status).toBe(409)

    const start = await hub.request('POST', `/api/v1/agents/${agent.id}/start`, {body: {}})
    expect(start.body.agent.phase).toBe('running')
    expect(hub.tmux('has-session', '-t', `=${session()}`).code).toBe(0)
    const restart = await hub.request('POST', `/api/v1/projects/default/agents/demo/restart`, {body: {}})
    expect(restart.body.agent.phase).toBe('running')
    expect(hub.tmux('has-session', '-t', `=${session()}`).code).toBe(0)
  })

  it('a harness that exits is reported stopped by the broker, with its output archived', async () => {
    const r = await hub.request('POST', '/api/v1/agents', {body: {name: 'brief', projectId: 'default', harnessConfig: 'shell'}})
    const id = r.body.agent.id
    hub.tmux('send-keys', '-t', `=svc-${id}:`, 'echo last-words; exit', 'Enter')
    // The broker checks its sessions every 15 s.
    await waitFor(async () => (await hub.request('GET', `/api/v1/agents/${id}`)).body.agent.phase === 'stopped', 25_000, 'reported stopped')
    expect((await hub.request('GET', `/api/v1/agents/${id}/logs`)).body).toContain('last-words')
    await hub.request('DELETE', `/api/v1/agents/${id}`)
  }, 40_000)

  it('delete removes the tmux session and frees the name', async () => {
    const del = await hub.request('DELETE', `/api/v1/projects/default/agents/demo`)
    expect(del.status).toBe(200)
    expect(hub.tmux('has-session', '-t', `=${session()}`).code).not.toBe(0)
    expect((await hub.request('GET', `/api/v1/agents/${agent.id}`)).status).toBe(404)
    const again = await hub.request('POST', '/api/v1/agents', {body: {name: 'demo', projectId: 'default', harnessConfig: 'shell'}})
    expect(again.status).toBe(201)
    expect(again.body.agent.phase).toBe('running')
    await hub.request('DELETE', `/api/v1/agents/${again.body.agent.id}`)
    expect(hub.tmux('has-session', '-t', `=svc-${again.body.agent.id}`).code).not.toBe(0)
  })
})
