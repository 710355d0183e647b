import {afterEach, beforeEach, expect, it} from 'vitest'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {startOtlpReceiver, type OtlpReceiver} from '../helpers/otlp-receiver.js'

/**
 * Hub reporting of a broker: the Hub's co-located broker (real tmux runtime, real tunnel) reports
 * its events to the Hub every `telemetry.hub.report_interval`, and the Hub exports them once.
 */
describeEachDialect('telemetry: a broker reports to the Hub', (dialect) => {
  let receiver: OtlpReceiver
  let hub: LiveHub
  beforeEach(async () => {
    receiver = await startOtlpReceiver()
    hub = await startLiveHub(dialect, {
      env: {SVC_TELEMETRY_ENABLED: 'true', SVC_OTEL_ENDPOINT: receiver.url, SVC_OTEL_PROTOCOL: 'http'},
      files: {'.svc/settings.yaml': 'schema_version: "1"\ntelemetry:\n  hub:\n    report_interval: 50ms\n'},
    })
  })
  afterEach(async () => {
    await hub?.dispose()
    await receiver.close()
  })

  it('exports the broker\'s agent events through the Hub, once, tagged with the broker', async () => {
    const projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'rep'}})).body.project.id
    const created = await hub.request('POST', '/api/v1/agents', {body: {projectId, name: 'sh'}})
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const agentId = created.body.agent.id
    expect((await hub.request('DELETE', `/api/v1/agents/${agentId}`)).status).toBe(200)
    const names = () => receiver.spans().map((s) => s.name)
    // Reports travel on the broker's interval and through the tunnel: wait for both to arrive.
    await waitFor(async () => {
      await hub.telemetry.flush()
      return (names().includes('broker.agent.started') && names().includes('broker.agent.stopped')) || null
    }, 20_000, 'the broker\'s reports exported')
    const started = receiver.spans().filter((s) => s.name === 'broker.agent.started')
    expect(started).toHaveLength(1)
    expect(started[0].attributes).toMatchObject({'agent.id': agentId, 'project.id': projectId, 'broker.id': hub.brokerId})
    // Exported by the Hub, not by the broker itself.
    expect(started[0].resource['service.name']).toBe('svc-hub')
    // The Hub's own event of the broker's tunnel.
    expect(receiver.spans().filter((s) => s.name === 'broker.connected').map((s) => s.attributes['broker.id'])).toEqual([hub.brokerId])
  })
})
