import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import pino from 'pino'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {toTelemetryConfig} from '../../src/telemetry/config.js'
import {REDACTED, type TelemetryEvent} from '../../src/telemetry/filter.js'
import {createTelemetryPipeline, type PipelineOptions, type TelemetryPipeline} from '../../src/telemetry/pipeline.js'
import {startOtlpReceiver, type OtlpReceiver} from '../helpers/otlp-receiver.js'

const logger = pino({level: 'silent'})
const ev = (type: string, attributes: TelemetryEvent['attributes'] = {}): TelemetryEvent => ({type, time: Date.now(), attributes})

let receiver: OtlpReceiver
let pipelines: TelemetryPipeline[] = []
beforeEach(async () => {
  receiver = await startOtlpReceiver()
})
afterEach(async () => {
  await Promise.all(pipelines.map((p) => p.shutdown()))
  pipelines = []
  await receiver.close()
})

/** A pipeline exporting over OTLP/HTTP to the test receiver, with `tree` over that. */
async function pipeline(tree: Record<string, unknown>, opts: Partial<PipelineOptions> = {}) {
  const p = createTelemetryPipeline({service: 'svc-test', debug: false, logger, ...opts})
  pipelines.push(p)
  const base = {enabled: true, cloud: {endpoint: receiver.url, protocol: 'http'}}
  await p.configure(toTelemetryConfig({...base, ...tree, cloud: {...base.cloud, ...((tree.cloud as object) ?? {})}}))
  return p
}

describe('telemetry pipeline against a real OTLP receiver', () => {
  it('exports events as spans with redacted and hashed attributes, the default exclusion and the resource', async () => {
    const p = await pipeline({resource: {'deployment.environment': 'test'}, cloud: {headers: {'x-api-key': 'k1'}}})
    p.emit(ev('agent.user.prompt', {prompt: 'do the secret thing', session_id: 's-1'}))
    p.emit(ev('agent.tool', {tool_input: 'rm -rf', tool_output: 'done', 'user.email': 'ann@example.com', session_id: 's-1', tool: 'bash'}))
    await p.flush()
    const spans = receiver.spans()
    expect(spans.map((s) => s.name)).toEqual(['agent.tool'])
    expect(spans[0].attributes).toEqual({
      tool_input: REDACTED,
      tool_output: REDACTED,
      'user.email': REDACTED,
      // sha256sum of `s-1`
      session_id: '6a840baf5d8c3ff241688aeb14546e653774cd5387faf1cb982b0fbbf1fbb810',
      tool: 'bash',
    })
    expect(spans[0].resource).toMatchObject({'service.name': 'svc-test', 'deployment.environment': 'test'})
    expect(receiver.requests[0].contentType).toBe('application/x-protobuf')
    expect(receiver.requests[0].headers['x-api-key']).toBe('k1')
    expect(p.stats().filtered).toBe(1)
  })

  it('exports nothing when telemetry is disabled', async () => {
    const p = await pipeline({enabled: false})
    for (let i = 0; i < 5; i++) p.emit(ev('agent.status', {phase: 'running'}))
    await p.flush()
    expect(receiver.requests).toEqual([])
    expect(p.stats().sinks).toEqual({})
  })

  it('exports nothing with cloud export off', async () => {
    const p = await pipeline({cloud: {enabled: false}})
    p.emit(ev('agent.status'))
    await p.flush()
    expect(receiver.requests).toEqual([])
  })

  it('sends batches of at most cloud.batch.max_size spans', async () => {
    const p = await pipeline({cloud: {batch: {max_size: 3}}})
    for (let i = 0; i < 7; i++) p.emit(ev('agent.status', {n: i}))
    await p.flush()
    expect(receiver.requests.map((r) => r.spans.length)).toEqual([3, 3, 1])
    expect(receiver.spans().map((s) => s.attributes.n)).toEqual([0, 1, 2, 3, 4, 5, 6])
  })

  it('exports a partial batch when cloud.batch.timeout passes', async () => {
    const p = await pipeline({cloud: {batch: {timeout: '20ms'}}})
    const next = receiver.nextRequest()
    p.emit(ev('agent.status'))
    // No flush: only the batch timer can send this request.
    expect((await next).spans.map((s) => s.name)).toEqual(['agent.status'])
  })

  it('samples by the default rate and per event type', async () => {
    let i = 0
    const draws = [0.1, 0.9, 0.3, 0.7]
    const p = await pipeline({filter: {sampling: {default: 0.5, rates: {'agent.status': 1, 'agent.tool': 0}}}}, {random: () => draws[i++ % draws.length]})
    for (let n = 0; n < 4; n++) p.emit(ev('agent.tool', {n}))
    for (let n = 0; n < 4; n++) p.emit(ev('agent.status', {n}))
    for (let n = 0; n < 4; n++) p.emit(ev('hub.agent.created', {n}))
    await p.flush()
    const names = receiver.spans().map((s) => `${s.name}#${s.attributes.n}`)
    expect(names.filter((n) => n.startsWith('agent.tool'))).toEqual([])
    expect(names.filter((n) => n.startsWith('agent.status'))).toHaveLength(4)
    // only the default rate 0.5 draws: 0.1 and 0.3 are kept, 0.9 and 0.7 are not
    expect(names.filter((n) => n.startsWith('hub.agent.created')).length).toBe(2)
  })

  it('writes JSON lines to local.file and stderr', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'svc-tel-')), 'events.jsonl')
    const written: string[] = []
    const p = await pipeline({cloud: {enabled: false}, local: {enabled: true, file, console: true}}, {stderr: {write: (t: string) => written.push(t)}})
    p.emit(ev('agent.status', {prompt: 'x', phase: 'running'}))
    await p.flush()
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(lines).toEqual([{time: expect.any(String), type: 'agent.status', attributes: {prompt: REDACTED, phase: 'running'}, resource: expect.objectContaining({'service.name': 'svc-test'})}])
    expect(written.join('')).toBe(readFileSync(file, 'utf8'))
  })

  it('reports filtered events to the Hub through the hub sink, and leaves cloud export to the Hub', async () => {
    const reported: TelemetryEvent[][] = []
    const p = await pipeline({}, {report: (events) => void reported.push(events)})
    p.emit(ev('broker.agent.started', {session_id: 'abc', agent_id: 'a1'}))
    p.emit(ev('agent.user.prompt', {prompt: 'x'}))
    await p.flush()
    expect(reported).toEqual([[{type: 'broker.agent.started', time: expect.any(Number), attributes: {session_id: expect.stringMatching(/^[0-9a-f]{64}$/), agent_id: 'a1'}}]])
    // The cloud endpoint is configured, but the Hub exports reported events: not sent twice.
    expect(receiver.requests).toEqual([])
    expect(Object.keys(p.stats().sinks)).toEqual(['hub'])
  })

  it('with the receiver down, emit returns at once and a full queue drops its oldest spans', async () => {
    await receiver.close()
    // A short export timeout only keeps the test short: the exporter gives up retrying sooner.
    const p = await pipeline({cloud: {batch: {max_size: 2}}}, {exportTimeoutMs: 100})
    for (let i = 0; i < 50; i++) p.emit(ev('agent.status', {n: i}))
    // Everything was accepted synchronously; what did not fit was dropped, not waited for.
    const s = p.stats().sinks.cloud!
    expect(s.dropped).toBeGreaterThan(0)
    // the queue holds four batches
    expect(s.queued).toBeLessThanOrEqual(8)
    await p.flush()
    const after = p.stats().sinks.cloud!
    expect(after.exported).toBe(0)
    expect(after.failed + after.dropped).toBe(50)
  })

  it('applies a new configuration without a restart', async () => {
    const p = await pipeline({})
    p.emit(ev('agent.status', {n: 1}))
    await p.configure(toTelemetryConfig({enabled: false}))
    p.emit(ev('agent.status', {n: 2}))
    await p.configure(toTelemetryConfig({enabled: true, cloud: {endpoint: receiver.url, protocol: 'http'}, filter: {events: {exclude: []}}}))
    p.emit(ev('agent.user.prompt', {n: 3}))
    await p.flush()
    expect(receiver.spans().map((s) => `${s.name}#${s.attributes.n}`)).toEqual(['agent.status#1', 'agent.user.prompt#3'])
  })
})
