import {describe, expect, it} from 'vitest'
import type {Bootstrap} from '../config/bootstrap.js'
import {mergeTelemetry, telemetryEnv, toTelemetryConfig, withTelemetryEnv} from './config.js'

describe('telemetry configuration', () => {
  it('has the defaults of the spec table', () => {
    expect(toTelemetryConfig({})).toEqual({
      enabled: false,
      cloud: {enabled: true, endpoint: null, protocol: 'grpc', headers: {}, tls: {enabled: true, insecureSkipVerify: false}, batch: {maxSize: 512, timeoutMs: 5000}},
      hub: {enabled: true, reportIntervalMs: 30_000},
      local: {enabled: false, file: null, console: false},
      filter: {
        enabled: true,
        respectDebugMode: true,
        include: [],
        exclude: ['agent.user.prompt'],
        redact: ['prompt', 'user.email', 'tool_output', 'tool_input'],
        hash: ['session_id'],
        samplingDefault: 1,
        samplingRates: {},
      },
      resource: {},
    })
  })

  it('merges global, project, template and agent layers key by key, later wins', () => {
    const global = {enabled: true, cloud: {endpoint: 'otel:4317', headers: {a: '1'}}, filter: {events: {exclude: ['x']}}}
    const project = {cloud: {protocol: 'http', headers: {b: '2'}}}
    const template = {filter: {sampling: {rates: {'agent.tool': 0.5}}}}
    const agent = {filter: {events: {exclude: []}}, resource: {team: 'blue'}}
    const c = toTelemetryConfig(mergeTelemetry(global, project, null, template, agent))
    expect(c.cloud).toMatchObject({endpoint: 'otel:4317', protocol: 'http', headers: {a: '1', b: '2'}})
    // a list is replaced whole: the agent's empty exclude list lets agent.user.prompt through
    expect(c.filter.exclude).toEqual([])
    expect(c.filter.samplingRates).toEqual({'agent.tool': 0.5})
    expect(c.resource).toEqual({team: 'blue'})
  })

  it('reads SVC_TELEMETRY_* and SVC_OTEL_* and reports values that do not parse', () => {
    const {tree, problems} = telemetryEnv({
      SVC_TELEMETRY_ENABLED: 'true',
      SVC_TELEMETRY_CLOUD_ENABLED: 'no',
      SVC_OTEL_ENDPOINT: 'collector:4317',
      SVC_OTEL_PROTOCOL: 'udp',
      SVC_OTEL_INSECURE: '1',
      SVC_TELEMETRY_HUB_ENABLED: 'maybe',
      SVC_TELEMETRY_DEBUG: 'on',
    })
    expect(tree).toEqual({enabled: true, cloud: {enabled: false, endpoint: 'collector:4317', tls: {insecure_skip_verify: true}}, local: {enabled: true}})
    expect(problems).toEqual([
      'SVC_OTEL_PROTOCOL: expected one of "grpc", "http", found "udp"',
      'SVC_TELEMETRY_HUB_ENABLED: expected true or false, found "maybe"',
    ])
  })

  it('turns hub reporting on in hosted mode whatever the settings say', () => {
    expect(toTelemetryConfig({hub: {enabled: false}}).hub.enabled).toBe(false)
    expect(toTelemetryConfig({hub: {enabled: false}}, {hosted: true}).hub.enabled).toBe(true)
  })

  it('parses durations and falls back to the default for values of the wrong type', () => {
    const c = toTelemetryConfig({cloud: {batch: {timeout: '250ms', max_size: 0}}, hub: {report_interval: '1m'}, filter: {sampling: {default: 3, rates: {a: 0.1, b: 'x'}}}})
    expect(c.cloud.batch).toEqual({maxSize: 512, timeoutMs: 250})
    expect(c.hub.reportIntervalMs).toBe(60_000)
    expect(c.filter.samplingDefault).toBe(1)
    expect(c.filter.samplingRates).toEqual({a: 0.1})
  })

  it('puts the variables into the bootstrap the Hub seeds its telemetry section from', () => {
    const boot = {tree: {telemetry: {enabled: false, cloud: {endpoint: 'file:4317', headers: {a: '1'}}}}, values: {'telemetry.enabled': false}} as unknown as Bootstrap
    const warnings: string[] = []
    const out = withTelemetryEnv(boot, {SVC_TELEMETRY_ENABLED: '1', SVC_OTEL_ENDPOINT: 'env:4317', SVC_OTEL_INSECURE: 'perhaps'}, (m) => warnings.push(m))
    expect(out.tree.telemetry).toEqual({enabled: true, cloud: {endpoint: 'env:4317', headers: {a: '1'}}})
    expect(out.values['telemetry.enabled']).toBe(true)
    expect(warnings).toEqual(['telemetry: SVC_OTEL_INSECURE: expected true or false, found "perhaps" (ignored)'])
    expect(withTelemetryEnv(boot, {}, () => {})).toBe(boot)
  })
})
