import pino from 'pino'
import {afterEach, beforeAll, describe, expect, it} from 'vitest'
import {toTelemetryConfig} from '../../src/telemetry/config.js'
import {REDACTED} from '../../src/telemetry/filter.js'
import {createTelemetryPipeline, type TelemetryPipeline} from '../../src/telemetry/pipeline.js'
import {selfSignedCert, startOtlpGrpcReceiver, startOtlpReceiver, type OtlpReceiver, type TestCert} from '../helpers/otlp-receiver.js'

/** The `cloud` sink's transports against real receivers: OTLP over gRPC, and TLS verified or skipped. */
const logger = pino({level: 'silent'})
let cert: TestCert
let receiver: OtlpReceiver | undefined
let pipeline: TelemetryPipeline | undefined
beforeAll(() => {
  cert = selfSignedCert()
})
afterEach(async () => {
  await pipeline?.shutdown()
  await receiver?.close()
  pipeline = receiver = undefined
})

async function exportOne(cloud: Record<string, unknown>) {
  pipeline = createTelemetryPipeline({service: 'svc-test', debug: false, logger, exportTimeoutMs: 5000})
  await pipeline.configure(toTelemetryConfig({enabled: true, cloud}))
  pipeline.emit({type: 'agent.tool', time: Date.now(), attributes: {tool_input: 'x', tool: 'bash'}})
  await pipeline.flush()
  return pipeline.stats().sinks.cloud!
}

describe('telemetry cloud transports', () => {
  it('exports over gRPC with the headers as metadata', async () => {
    receiver = await startOtlpGrpcReceiver()
    const s = await exportOne({endpoint: receiver.url, protocol: 'grpc', tls: {enabled: false}, headers: {'x-api-key': 'k2'}})
    expect(s.exported).toBe(1)
    expect(receiver.requests[0].contentType).toBe('grpc')
    expect(receiver.requests[0].headers['x-api-key']).toBe('k2')
    expect(receiver.spans().map((x) => x.attributes)).toEqual([{tool_input: REDACTED, tool: 'bash'}])
  })

  it('gRPC with TLS refuses an unverified certificate unless insecure_skip_verify', async () => {
    receiver = await startOtlpGrpcReceiver({tls: cert})
    expect(await exportOne({endpoint: receiver.url, protocol: 'grpc'})).toMatchObject({exported: 0, failed: 1})
    await pipeline!.shutdown()
    expect(await exportOne({endpoint: receiver.url, protocol: 'grpc', tls: {insecure_skip_verify: true}})).toMatchObject({exported: 1})
    expect(receiver.spans()).toHaveLength(1)
  })

  it('HTTPS refuses an unverified certificate unless insecure_skip_verify', async () => {
    receiver = await startOtlpReceiver({tls: cert})
    expect(await exportOne({endpoint: receiver.url, protocol: 'http'})).toMatchObject({exported: 0, failed: 1})
    await pipeline!.shutdown()
    expect(await exportOne({endpoint: receiver.url, protocol: 'http', tls: {insecure_skip_verify: true}})).toMatchObject({exported: 1})
    expect(receiver.requests.map((r) => r.contentType)).toEqual(['application/x-protobuf'])
  })

  it('a bare host:port is https with TLS on and http with TLS off', async () => {
    receiver = await startOtlpReceiver({tls: cert})
    expect(await exportOne({endpoint: receiver.url.replace('https://', ''), protocol: 'http', tls: {insecure_skip_verify: true}})).toMatchObject({exported: 1})
    await pipeline!.shutdown()
    await receiver.close()
    receiver = await startOtlpReceiver()
    expect(await exportOne({endpoint: receiver.url.replace('http://', ''), protocol: 'http', tls: {enabled: false}})).toMatchObject({exported: 1})
  })
})
