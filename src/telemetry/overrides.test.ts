import {describe, expect, it} from 'vitest'
import {agentTelemetryOverride, TEMPLATE_SETTINGS_FILE} from './overrides.js'

// Template files are stored and handed over with base64 content.
const file = (text: string) => ({path: TEMPLATE_SETTINGS_FILE, content: Buffer.from(text).toString('base64')})

describe('telemetry overrides of a template and an agent', () => {
  it('takes the template\'s settings file, then the request, later wins key by key', () => {
    const templateFiles = [file('schema_version: "1"\ntelemetry:\n  filter:\n    events:\n      exclude: []\n    sampling:\n      default: 0.5\n'), {path: 'README.md', content: 'eA=='}]
    expect(agentTelemetryOverride({templateFiles, requested: {filter: {sampling: {default: 0.1}}, resource: {team: 'blue'}}})).toEqual({
      filter: {events: {exclude: []}, sampling: {default: 0.1}},
      resource: {team: 'blue'},
    })
  })

  it('is null when neither sets telemetry', () => {
    expect(agentTelemetryOverride({templateFiles: [file('schema_version: "1"\ndefault_template: t\n')]})).toBeNull()
    expect(agentTelemetryOverride({})).toBeNull()
  })

  it('refuses a request override that breaks the settings schema, naming the key', () => {
    expect(() => agentTelemetryOverride({requested: {filter: {sampling: {default: 3}}}})).toThrow(/telemetry\.filter\.sampling\.default/)
    expect(() => agentTelemetryOverride({requested: {cloud: {protocol: 'udp'}}})).toThrow(/telemetry\.cloud\.protocol/)
    expect(() => agentTelemetryOverride({requested: ['x']})).toThrow()
  })
})
