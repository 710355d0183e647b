import {describe, expect, it} from 'vitest'
import {keyPath, parseSettingValue} from './settings-values.js'

describe('keyPath', () => {
  it('splits on dots; a quoted part may hold dots', () => {
    expect(keyPath('hub.endpoint')).toEqual(['hub', 'endpoint'])
    expect(keyPath('telemetry.filter.sampling.rates."agent.tool"')).toEqual(['telemetry', 'filter', 'sampling', 'rates', 'agent.tool'])
  })
  it.each(['', '.a', 'a.', 'a..b', 'a."b', 'a."b"c'])('refuses %j', (key) => {
    expect(() => keyPath(key)).toThrow(expect.objectContaining({code: 'usage_error'}))
  })
})

describe('parseSettingValue', () => {
  const p = (key: string, raw: string) => parseSettingValue(keyPath(key), raw)
  it('parses by the schema type', () => {
    expect(p('cli.autohelp', 'off')).toBe(false)
    expect(p('default_max_turns', '12')).toBe(12)
    expect(p('telemetry.filter.sampling.default', '0.25')).toBe(0.25)
    expect(p('default_resources.cpu', '0.5')).toBe('0.5')
    expect(p('hub.grove_id', '123')).toBe('123')
    expect(p('telemetry.filter.events.exclude', 'a, b')).toEqual(['a', 'b'])
    expect(p('telemetry.filter.events.exclude', '["a"]')).toEqual(['a'])
    expect(p('telemetry.filter.events.exclude', '')).toEqual([])
    expect(p('runtimes.docker.env', '{"A":"1"}')).toEqual({A: '1'})
    expect(p('runtimes.docker.env.PATH', '/bin')).toBe('/bin')
    expect(p('telemetry.filter.sampling.rates."agent.tool"', '0.1')).toBe(0.1)
    expect(p('server.github_app.app_id', '42')).toBe(42)
  })
  it.each([
    ['cli.autohelp', 'maybe', 'cli.autohelp: expected true or false, found "maybe"'],
    ['default_max_turns', '0', 'default_max_turns: expected a whole number of at least 1, found 0'],
    ['telemetry.cloud.protocol', 'udp', 'telemetry.cloud.protocol: expected one of "grpc", "http", found "udp"'],
    ['default_max_duration', 'soon', 'default_max_duration: expected a duration such as 30s, 45m or 2h, found "soon"'],
    ['runtimes.docker.env', 'A=1', 'runtimes.docker.env: expected a mapping as a JSON object (like {"A":"1"}), found "A=1"'],
    ['hub.endpiont', 'x', 'unknown setting "hub.endpiont"'],
  ])('%s %j is refused', (key, raw, message) => {
    expect(() => p(key, raw)).toThrow(message)
  })
})
