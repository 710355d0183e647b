import {describe, expect, it} from 'vitest'
import {formatIssue} from './settings-issues.js'
import {validateSettingsText} from './settings-validate.js'

const check = (text: string) => validateSettingsText('s.yaml', text).issues.map(formatIssue)

describe('validateSettingsText', () => {
  it('accepts a full, valid file', () => {
    expect(check(`schema_version: "1"
active_profile: dev
default_max_turns: 50
default_max_duration: 2h
default_resources: {cpu: 0.5, memory: 4Gi, gpu: 1}
cli: {autohelp: false, interactive_disabled: true}
hub: {enabled: true, endpoint: "http://h", grove_id: g, local_only: false}
runtimes:
  dev: {type: local, env: {N: 1, B: true}}
harness_configs:
  claude:
    harness: claude
    args: [--verbose]
    secrets: [{key: K, type: file, target: /x}]
    resources: {memory: 8Gi}
profiles:
  dev: {runtime: dev, harness_overrides: {claude: {model: m}}}
telemetry:
  enabled: true
  cloud: {protocol: http, headers: {x-a: b}, batch: {max_size: 5, timeout: 10s}}
  filter: {sampling: {default: 0.5, rates: {agent.tool: 0.1}}}
server:
  hub: {port: 9000, admin_emails: "a@x, b@x", cors: {enabled: true, origins: ["*"]}}
`)).toEqual([])
  })

  it('names file, line, column, key, expected and found', () => {
    expect(check('schema_version: "1"\nhub:\n  local_only: maybe\ndefault_max_turns: 0\ndefault_max_duration: soon\ntelemetry:\n  filter:\n    sampling:\n      default: 2\n')).toEqual([
      's.yaml:3:15: hub.local_only: expected true or false, found the string "maybe"',
      's.yaml:4:20: default_max_turns: expected a whole number of at least 1, found 0',
      's.yaml:5:23: default_max_duration: expected a duration such as 30s, 45m or 2h, found "soon"',
      's.yaml:9:16: telemetry.filter.sampling.default: expected a number from 0 to 1, found 2',
    ])
  })

  it('reports required keys where they are missing', () => {
    expect(check('hub: {}\n')).toEqual(['s.yaml:1:1: schema_version: expected one of "1", found nothing (the key is required)'])
    expect(check('# only a comment\n')).toEqual(['s.yaml:1:1: schema_version: expected one of "1", found nothing (the key is required)'])
    expect(check('schema_version: "1"\nharness_configs:\n  c:\n    image: x\n    secrets:\n      - description: no key\n')).toEqual([
      's.yaml:4:5: harness_configs.c.harness: expected a string, found nothing (the key is required)',
      's.yaml:6:9: harness_configs.c.secrets.0.key: expected a string, found nothing (the key is required)',
    ])
    expect(check('schema_version: "1"\nprofiles:\n  p:\n    env: {}\n')).toEqual(['s.yaml:4:5: profiles.p.runtime: expected a string, found nothing (the key is required)'])
  })

  it('a harness config named after a built-in harness is of that type without saying so', () => {
    for (const name of ['shell', 'claude', 'codex', 'gemini', 'opencode']) expect(check(`schema_version: "1"\nharness_configs:\n  ${name}:\n    env: {A: "1"}\n`)).toEqual([])
    expect(check('schema_version: "1"\nharness_configs:\n  claude2:\n    env: {A: "1"}\n')).toEqual(['s.yaml:4:5: harness_configs.claude2.harness: expected a string, found nothing (the key is required)'])
  })

  it('refuses another schema version; the number 1 is a warning', () => {
    expect(check('schema_version: "2"\n')).toEqual(['s.yaml:1:17: schema_version: expected one of "1", found "2"'])
    expect(check('schema_version: 1\n')).toEqual(['s.yaml:1:17: warning: schema_version: expected the string "1", found the number 1 (write schema_version: "1")'])
  })

  it('keeps unknown keys and warns about them, at any depth', () => {
    const r = validateSettingsText('s.yaml', 'schema_version: "1"\nx_mine: {a: 1}\nhub:\n  endpiont: typo\n')
    expect(r.issues.map(formatIssue)).toEqual(['s.yaml:2:1: warning: x_mine: unknown key (kept as it is)', 's.yaml:4:3: warning: hub.endpiont: unknown key (kept as it is)'])
    expect(r.tree).toMatchObject({x_mine: {a: 1}, hub: {endpiont: 'typo'}})
  })

  it('reports a syntax error at its line', () => {
    const r = validateSettingsText('s.yaml', 'schema_version: "1"\nhub:\n  endpoint: a\n  endpoint: b\n')
    expect(r.parsed).toBe(false)
    expect(r.issues).toHaveLength(1)
    expect(r.issues[0]).toMatchObject({severity: 'error', line: 4, column: 3})
  })
})
