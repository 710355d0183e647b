import {createHash} from 'node:crypto'
import {afterEach, beforeEach, expect, it} from 'vitest'
import {REDACTED} from '../../src/telemetry/filter.js'
import {startFakeBrokerHub, type FakeBrokerHub} from '../helpers/fake-broker-hub.js'
import {describeEachDialect, type Dialect} from '../helpers/hub.js'
import {waitFor} from '../helpers/live-hub.js'
import {startOtlpReceiver, startStalledReceiver, type OtlpReceiver} from '../helpers/otlp-receiver.js'

/**
 * Telemetry of a real Hub (real database, live tunnel with a hand-driven broker) exported to a
 * real OTLP/HTTP receiver: events of status reports, agents' and brokers' reports, the filter,
 * per-agent overrides, a save through the admin API, and a dead collector.
 */
const SESSION_HASH = '6a840baf5d8c3ff241688aeb14546e653774cd5387faf1cb982b0fbbf1fbb810' // sha256sum of `s-1`

const settingsFile = (telemetry: string) => ({'.svc/settings.yaml': `schema_version: "1"\ntelemetry:\n${telemetry}`})

async function hubWith(dialect: Dialect, env: Record<string, string>, telemetry = '  resource:\n    deployment.environment: test\n') {
  const hub = await startFakeBrokerHub(dialect, {env, files: settingsFile(telemetry)})
  const projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'tel'}})).body.project.id as string
  const create = async (name: string, extra: Record<string, unknown> = {}) => {
    const r = await hub.request('POST', '/api/v1/agents', {body: {projectId, name, ...extra}})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    return {id: r.body.agent.id as string, token: hub.tokenOf(r.body.agent.id)}
  }
  return {hub, projectId, create}
}

describeEachDialect('telemetry: a Hub exporting to an OTLP receiver', (dialect) => {
  let receiver: OtlpReceiver
  let h: Awaited<ReturnType<typeof hubWith>>
  beforeEach(async () => {
    receiver = await startOtlpReceiver()
    // The variables the spec names: telemetry on, the cloud endpoint and protocol.
    h = await hubWith(dialect, {SVC_TELEMETRY_ENABLED: 'true', SVC_OTEL_ENDPOINT: receiver.url, SVC_OTEL_PROTOCOL: 'http'})
  })
  afterEach(async () => {
    await h?.hub.dispose()
    await receiver.close()
  })
  const spans = (name: string) => receiver.spans().filter((s) => s.name === name)

  it('exports status reports and agents\' events, redacted, hashed, with the default exclusion', async () => {
    const a = await h.create('worker')
    const status = await h.hub.request('POST', `/api/v1/agents/${a.id}/status`, {token: a.token, body: {phase: 'running', activity: 'thinking', detail: 'planning'}})
    expect(status.status).toBe(200)
    expect((await h.hub.request('POST', `/api/v1/agents/${a.id}/status`, {token: a.token, body: {heartbeat: true}})).status).toBe(200)
    const report = await h.hub.request('POST', `/api/v1/agents/${a.id}/telemetry`, {
      token: a.token,
      body: {
        events: [
          {type: 'agent.user.prompt', attributes: {prompt: 'the secret plan', session_id: 's-1'}},
          {type: 'agent.tool', time: 1_700_000_000_000, attributes: {tool_input: 'cat ~/.ssh/id', tool_output: 'KEY', 'user.email': 'ann@example.com', session_id: 's-1', tool: 'bash'}},
        ],
      },
    })
    expect(report.status).toBe(202)
    expect(report.body).toEqual({accepted: 2})
    await h.hub.telemetry.flush()

    expect(spans('agent.status').map((s) => s.attributes)).toEqual([{'agent.id': a.id, phase: 'running', activity: 'thinking', detail: 'planning'}])
    expect(spans('agent.heartbeat').map((s) => s.attributes)).toEqual([{'agent.id': a.id}])
    expect(spans('agent.user.prompt')).toEqual([])
    const [tool] = spans('agent.tool')
    expect(tool.attributes).toEqual({'agent.id': a.id, tool_input: REDACTED, tool_output: REDACTED, 'user.email': REDACTED, session_id: SESSION_HASH, tool: 'bash'})
    expect(tool.startTimeMs).toBe(1_700_000_000_000)
    expect(tool.resource).toMatchObject({'service.name': 'svc-hub', 'deployment.environment': 'test'})
    expect(spans('agent.created').map((s) => s.attributes['agent.id'])).toEqual([a.id])
    // Nothing leaked anywhere in what the receiver got.
    expect(JSON.stringify(receiver.requests.map((r) => r.spans))).not.toMatch(/secret plan|ssh|KEY|ann@example|"s-1"/)
  })

  it('only the agent itself reports its events', async () => {
    const a = await h.create('solo')
    const b = await h.create('other')
    expect((await h.hub.request('POST', `/api/v1/agents/${a.id}/telemetry`, {token: b.token, body: {events: [{type: 'x'}]}})).status).toBe(403)
    expect((await h.hub.request('POST', `/api/v1/agents/${a.id}/telemetry`, {body: {events: [{type: 'x'}]}})).status).toBe(403)
  })

  it('applies an agent\'s and its template\'s telemetry overrides to its events only', async () => {
    const open = await h.create('open', {telemetry: {filter: {events: {exclude: []}}}})
    const closed = await h.create('closed')
    for (const a of [open, closed]) {
      await h.hub.request('POST', `/api/v1/agents/${a.id}/telemetry`, {token: a.token, body: {events: [{type: 'agent.user.prompt', attributes: {prompt: 'p'}}]}})
    }
    await h.hub.telemetry.flush()
    // Excluded by default, let through by the override; the prompt itself is still redacted.
    expect(spans('agent.user.prompt').map((s) => s.attributes)).toEqual([{'agent.id': open.id, prompt: REDACTED}])
    // A template's .svc/settings.yaml overrides too, under the request's override.
    const yaml = 'schema_version: "1"\ntelemetry:\n  filter:\n    events:\n      exclude: []\n    attributes:\n      redact: []\n'
    const tpl = await h.hub.request('POST', '/api/v1/templates', {body: {name: 'chatty', projectId: h.projectId, files: [{path: '.svc/settings.yaml', content: Buffer.from(yaml).toString('base64'), sha256: createHash('sha256').update(yaml).digest('hex')}]}})
    expect(tpl.status, JSON.stringify(tpl.body)).toBe(201)
    const fromTemplate = await h.create('from-template', {template: 'chatty'})
    const overridden = await h.create('overridden', {template: 'chatty', telemetry: {filter: {events: {exclude: ['agent.user.prompt']}}}})
    for (const a of [fromTemplate, overridden]) {
      await h.hub.request('POST', `/api/v1/agents/${a.id}/telemetry`, {token: a.token, body: {events: [{type: 'agent.user.prompt', attributes: {prompt: 'p'}}]}})
    }
    await h.hub.telemetry.flush()
    expect(spans('agent.user.prompt').map((s) => s.attributes).slice(1)).toEqual([{'agent.id': fromTemplate.id, prompt: 'p'}])
    const bad = await h.hub.request('POST', '/api/v1/agents', {body: {projectId: h.projectId, name: 'bad', telemetry: {filter: {sampling: {default: 3}}}}})
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('validation_error')
  })

  it('exports a broker\'s report without hashing its hashed values again', async () => {
    h.hub.fake.send({t: 'evt', event: 'telemetry', data: {events: [{type: 'broker.agent.started', time: 1_700_000_000_000, attributes: {session_id: SESSION_HASH, prompt: 'p', n: 1}}, {type: 'agent.user.prompt'}, 'junk']}})
    // The tunnel is asynchronous: wait until the Hub has read the event, then export.
    await waitFor(async () => {
      await h.hub.telemetry.flush()
      return spans('broker.agent.started').length > 0 || null
    }, 10_000, 'the broker\'s report exported')
    expect(spans('broker.agent.started').map((s) => s.attributes)).toEqual([{session_id: SESSION_HASH, prompt: REDACTED, n: 1, 'broker.id': h.hub.fake.brokerId}])
    expect(spans('agent.user.prompt')).toEqual([])
  })

  it('a save through the admin API reconfigures telemetry without a restart', async () => {
    const a = await h.create('saved')
    const save = await h.hub.request('PUT', '/api/v1/admin/server-config', {body: {telemetry: {filter: {sampling: {rates: {'agent.status': 0}}}}}})
    expect(save.status, JSON.stringify(save.body)).toBe(200)
    await h.hub.request('POST', `/api/v1/agents/${a.id}/status`, {token: a.token, body: {activity: 'executing'}})
    await h.hub.request('POST', `/api/v1/agents/${a.id}/telemetry`, {token: a.token, body: {events: [{type: 'agent.tool', attributes: {tool: 'x'}}]}})
    await h.hub.telemetry.flush()
    // The save merged over the seed: the endpoint from SVC_OTEL_ENDPOINT still applies.
    expect(spans('agent.tool')).toHaveLength(1)
    expect(spans('agent.status')).toEqual([])

    const off = await h.hub.request('PUT', '/api/v1/admin/server-config', {body: {telemetry: {enabled: false}}})
    expect(off.status).toBe(200)
    const before = receiver.spans().length
    await h.hub.request('POST', `/api/v1/agents/${a.id}/telemetry`, {token: a.token, body: {events: [{type: 'agent.tool'}]}})
    await h.hub.telemetry.flush()
    expect(receiver.spans().length).toBe(before)
  })
})

describeEachDialect('telemetry: off, or with the collector down', (dialect) => {
  let h: Awaited<ReturnType<typeof hubWith>> | undefined
  afterEach(async () => {
    await h?.hub.dispose()
    h = undefined
  })

  it('exports nothing when telemetry is disabled (the default)', async () => {
    const receiver = await startOtlpReceiver()
    try {
      h = await hubWith(dialect, {SVC_OTEL_ENDPOINT: receiver.url, SVC_OTEL_PROTOCOL: 'http'})
      const a = await h.create('quiet')
      expect((await h.hub.request('POST', `/api/v1/agents/${a.id}/status`, {token: a.token, body: {activity: 'thinking'}})).status).toBe(200)
      const report = await h.hub.request('POST', `/api/v1/agents/${a.id}/telemetry`, {token: a.token, body: {events: [{type: 'agent.tool'}]}})
      expect(report.body).toEqual({accepted: 0})
      await h.hub.telemetry.flush()
      expect(receiver.requests).toEqual([])
      expect(h.hub.telemetry.pipeline.stats().sinks).toEqual({})
    } finally {
      await receiver.close()
    }
  })

  it('with the collector not answering, status reports still answer and the export queue drops the oldest', async () => {
    const stalled = await startStalledReceiver()
    try {
      // Batches of 2: one export hangs on the collector, the queue holds four batches (8 spans).
      h = await hubWith(dialect, {SVC_TELEMETRY_ENABLED: 'true', SVC_OTEL_ENDPOINT: stalled.url, SVC_OTEL_PROTOCOL: 'http'}, '  cloud:\n    batch:\n      max_size: 2\n      timeout: 1h\n')
      const a = await h.create('busy')
      for (let i = 0; i < 40; i++) {
        const r = await h.hub.request('POST', `/api/v1/agents/${a.id}/status`, {token: a.token, body: {activity: i % 2 ? 'thinking' : 'executing', detail: `step ${i}`}})
        expect(r.status).toBe(200)
      }
      await waitFor(() => stalled.requests() > 0 || null, 10_000, 'an export reached the collector')
      const s = h.hub.telemetry.pipeline.stats().sinks.cloud!
      expect(s.exported).toBe(0)
      expect(s.queued).toBeLessThanOrEqual(8)
      expect(s.dropped).toBeGreaterThan(0)
      // The agent's state took every report all the same.
      expect((await h.hub.request('GET', `/api/v1/agents/${a.id}`)).body.agent.detail).toBe('step 39')
    } finally {
      await stalled.close()
    }
  })
})
