import {mkdirSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeEach, describe, expect, it} from 'vitest'
import {cliEnv, runCli} from '../helpers/cli.js'

let root: string
let home: string
let repo: string
let env: NodeJS.ProcessEnv
const norm = (s: string) => s.split(root).join('<tmp>')
const svc = (args: string[], opts: {cwd?: string; env?: NodeJS.ProcessEnv} = {}) => runCli(args, {env: opts.env ?? env, cwd: opts.cwd ?? repo})

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'svc-config-'))
  home = join(root, 'home')
  repo = join(root, 'repo')
  mkdirSync(home)
  mkdirSync(join(repo, '.svc'), {recursive: true})
  env = cliEnv(home)
})

const commented = `# project settings
schema_version: "1"   # format

hub:
  endpoint: 'http://old:9810'  # our hub
  # grove set by svc project register
  grove_id: g1
x_team: keep   # unknown, kept
`

describe('svc config set / unset', {timeout: 120_000}, () => {
  it('inside a checkout writes its .svc/settings.yaml, creating it with schema_version "1"', async () => {
    const r = await svc(['config', 'set', 'hub.endpoint', 'http://hub.example:9810'])
    expect(r.code).toBe(0)
    expect(norm(r.stdout)).toMatchInlineSnapshot(`
      "Set hub.endpoint to http://hub.example:9810 in <tmp>/repo/.svc/settings.yaml (project, created).
      "
    `)
    expect(readFileSync(join(repo, '.svc', 'settings.yaml'), 'utf8')).toBe('schema_version: "1"\nhub:\n  endpoint: http://hub.example:9810\n')
  })

  it('--global, or outside a checkout, writes ~/.svc/settings.yaml; --json shape', async () => {
    const r = await svc(['config', 'set', 'telemetry.enabled', 'yes', '--global', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({key: 'telemetry.enabled', value: true, file: join(home, '.svc', 'settings.yaml'), scope: 'global', created: true, changed: true, warnings: []})
    const outside = mkdtempSync(join(tmpdir(), 'svc-outside-'))
    const r2 = await svc(['config', 'set', 'cli.autohelp', 'false', '--json'], {cwd: outside})
    expect(r2.json).toMatchObject({scope: 'global', created: false, value: false})
    expect(readFileSync(join(home, '.svc', 'settings.yaml'), 'utf8')).toBe('schema_version: "1"\ntelemetry:\n  enabled: true\ncli:\n  autohelp: false\n')
  })

  it('parses values by the key type and keeps comments, order and unknown keys', async () => {
    const file = join(repo, '.svc', 'settings.yaml')
    writeFileSync(file, commented)
    for (const [key, value] of [
      ['hub.endpoint', 'http://new:9810'],
      ['default_max_turns', '40'],
      ['runtimes.dev.type', 'local'],
      ['runtimes.dev.env', '{"A":"1"}'],
      ['telemetry.filter.events.exclude', 'a.b, c.d'],
    ]) {
      const r = await svc(['config', 'set', key, value])
      expect(r.code, r.stderr).toBe(0)
    }
    expect(readFileSync(file, 'utf8')).toBe(`# project settings
schema_version: "1"   # format

hub:
  endpoint: 'http://new:9810'  # our hub
  # grove set by svc project register
  grove_id: g1
x_team: keep   # unknown, kept
default_max_turns: 40
runtimes:
  dev:
    type: local
    env:
      A: "1"
telemetry:
  filter:
    events:
      exclude:
        - a.b
        - c.d
`)
    const r = await svc(['config', 'unset', 'hub.grove_id'])
    expect(norm(r.stdout)).toMatchInlineSnapshot(`
      "Removed hub.grove_id from <tmp>/repo/.svc/settings.yaml (project).
      "
    `)
    expect(readFileSync(file, 'utf8')).toContain("hub:\n  endpoint: 'http://new:9810'  # our hub\n  # grove set by svc project register\nx_team: keep   # unknown, kept\n")
    const again = await svc(['config', 'unset', 'hub.grove_id', '--json'])
    expect(again.json).toEqual({key: 'hub.grove_id', file, scope: 'project', removed: false, warnings: []})
  })

  it('set twice on a map keeps both entries and the comments: a mapping merges key by key, null removes only its key', async () => {
    const file = join(repo, '.svc', 'settings.yaml')
    const text = `${commented}harness_configs:
  # pointed at the scripted model server
  claude:
    env:
      ANTHROPIC_BASE_URL: http://127.0.0.1:4010  # scripted
`
    writeFileSync(file, text)
    const steps: Array<[string, string]> = [
      ['harness_configs.broken', '{"harness":"claude","env":{"ANTHROPIC_BASE_URL":"http://127.0.0.1:9"}}'],
      ['harness_configs', '{"claude":{"model":"opus"}}'],
      ['harness_configs.claude.env', '{"EXTRA":"1"}'],
    ]
    for (const [key, value] of steps) {
      const r = await svc(['config', 'set', key, value])
      expect(r.code, r.stderr).toBe(0)
    }
    expect(readFileSync(file, 'utf8')).toBe(`${commented}harness_configs:
  # pointed at the scripted model server
  claude:
    env:
      ANTHROPIC_BASE_URL: http://127.0.0.1:4010  # scripted
      EXTRA: "1"
    model: opus
  broken:
    harness: claude
    env:
      ANTHROPIC_BASE_URL: http://127.0.0.1:9
`)
    // --json prints what the key holds afterwards; null in the mapping removes only that key.
    const rm = await svc(['config', 'set', 'harness_configs.claude.env', '{"EXTRA":null}', '--json'])
    expect(rm.json).toMatchObject({key: 'harness_configs.claude.env', value: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010'}, changed: true})
    const got = await svc(['config', 'get', 'harness_configs', '--json'])
    expect(got.json.value).toEqual({claude: {env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010'}, model: 'opus'}, broken: {harness: 'claude', env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:9'}}})
    expect(readFileSync(file, 'utf8')).toContain('      ANTHROPIC_BASE_URL: http://127.0.0.1:4010  # scripted\n    model: opus\n')
  })

  it('refuses a value of the wrong type, a value outside its set, and unknown keys (exit 2, file untouched)', async () => {
    const file = join(repo, '.svc', 'settings.yaml')
    writeFileSync(file, commented)
    const bad = await svc(['config', 'set', 'default_max_turns', 'many'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('Error: default_max_turns: expected a whole number of at least 1, found "many"')
    const proto = await svc(['config', 'set', 'telemetry.cloud.protocol', 'udp', '--json'])
    expect(proto.code).toBe(2)
    expect(proto.json).toEqual({error: {code: 'usage_error', message: 'telemetry.cloud.protocol: expected one of "grpc", "http", found "udp"'}})
    const unknown = await svc(['config', 'set', 'hub.endpiont', 'x'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('unknown setting "hub.endpiont"')
    expect(readFileSync(file, 'utf8')).toBe(commented)
  })

  it('warns when the settings become inconsistent (a profile naming a missing runtime)', async () => {
    const r = await svc(['config', 'set', 'profiles.dev.runtime', 'nope'])
    expect(r.code).toBe(0)
    expect(norm(r.stdout)).toMatchInlineSnapshot(`
      "Set profiles.dev.runtime to nope in <tmp>/repo/.svc/settings.yaml (project, created).
      Warning: <tmp>/repo/.svc/settings.yaml:4:14: profiles.dev.runtime: expected the name of a runtime (none is defined under runtimes), found "nope"
      "
    `)
  })
})

describe('svc config get / list', {timeout: 120_000}, () => {
  it('get prints the effective value; --json adds its origin', async () => {
    writeFileSync(join(repo, '.svc', 'settings.yaml'), commented)
    const r = await svc(['config', 'get', 'hub.endpoint'])
    expect(r.stdout).toBe('http://old:9810\n')
    const j = await svc(['config', 'get', 'hub.endpoint', '--json'], {env: {...env, SVC_HUB_ENDPOINT: 'http://env:1'}})
    expect(j.json).toEqual({key: 'hub.endpoint', value: 'http://env:1', origin: 'environment', sources: [{key: 'hub.endpoint', value: 'http://env:1', origin: 'environment', variable: 'SVC_HUB_ENDPOINT', known: true}]})
    const block = await svc(['config', 'get', 'telemetry.cloud.tls'])
    expect(block.stdout).toBe('enabled: true\ninsecure_skip_verify: false\n')
    const unset = await svc(['config', 'get', 'hub.grove_id'], {cwd: home})
    expect(unset).toMatchObject({code: 0, stdout: ''})
    expect((await svc(['config', 'get', 'nope'])).code).toBe(2)
  })

  it('list shows every effective value and where it came from', async () => {
    mkdirSync(join(home, '.svc'))
    writeFileSync(join(home, '.svc', 'settings.yaml'), 'schema_version: "1"\nhub:\n  endpoint: http://global:9810\ncli:\n  interactive_disabled: true\n')
    writeFileSync(join(repo, '.svc', 'settings.yaml'), commented)
    const r = await svc(['config', 'list'], {env: {...env, SVC_CLI_AUTOHELP: 'false'}})
    expect(r.code).toBe(0)
    // Column widths follow the longest key and value of the whole list: compare with single gaps.
    const lines = norm(r.stdout).split('\n').map((l) => l.replace(/ {2,}/g, '  '))
    expect([...lines.slice(0, 4), ...lines.filter((l) => /^(cli|hub|x_team|schema_version)\b/.test(l)), ...lines.slice(-2)].join('\n')).toMatchInlineSnapshot(`
      "global file: <tmp>/home/.svc/settings.yaml
      project file: <tmp>/repo/.svc/settings.yaml

      KEY  VALUE  ORIGIN
      cli.autohelp  false  environment (SVC_CLI_AUTOHELP)
      cli.interactive_disabled  true  global:5
      hub.endpoint  http://old:9810  project:5
      hub.grove_id  g1  project:7
      hub.local_only  false  default
      schema_version  1  project:2
      x_team  keep  project:8
      0 error(s), 1 warning(s) in the settings: run \`svc config validate\`.
      "
    `)
    const j = await svc(['config', 'list', '--json'])
    expect(Object.keys(j.json)).toEqual(['files', 'activeProfile', 'values', 'issues'])
    expect(j.json.values.find((v: {key: string}) => v.key === 'hub.grove_id')).toEqual({key: 'hub.grove_id', value: 'g1', origin: 'project', file: join(repo, '.svc', 'settings.yaml'), line: 7, column: 13, known: true})
  })
})

describe('svc config validate', {timeout: 120_000}, () => {
  it('prints file:line:column, the key and the expected type, and exits 1', async () => {
    const file = join(repo, 'bad.yaml')
    writeFileSync(file, 'schema_version: "1"\nhub:\n  local_only: maybe\ndefault_max_turns: "ten"\nruntimes:\n  dev:\n    type: dockr\nx_extra: 1\n')
    const r = await svc(['config', 'validate', 'bad.yaml'])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatchInlineSnapshot(`
      "bad.yaml:3:15: hub.local_only: expected true or false, found the string "maybe"
      bad.yaml:4:20: default_max_turns: expected a whole number of at least 1, found the string "ten"
      bad.yaml:7:11: runtimes.dev.type: expected one of "docker", "podman", "container", "kubernetes", "local", found "dockr"
      bad.yaml:8:1: warning: x_extra: unknown key (kept as it is)
      3 error(s), 1 warning(s).
      "
    `)
    const j = await svc(['config', 'validate', 'bad.yaml', '--json'])
    expect(j.code).toBe(1)
    expect(j.json).toMatchObject({valid: false, files: ['bad.yaml'], warnings: [{severity: 'warning', key: 'x_extra', line: 8, column: 1}]})
    expect(j.json.errors[0]).toEqual({severity: 'error', file: 'bad.yaml', line: 3, column: 15, key: 'hub.local_only', message: 'expected true or false, found the string "maybe"'})
  })

  it('exits 0 for valid settings (warnings allowed), and checks the files in effect without an argument', async () => {
    writeFileSync(join(repo, '.svc', 'settings.yaml'), commented)
    const r = await svc(['config', 'validate'])
    expect(r.code).toBe(0)
    expect(norm(r.stdout)).toMatchInlineSnapshot(`
      "<tmp>/repo/.svc/settings.yaml:8:1: warning: x_team: unknown key (kept as it is)
      <tmp>/repo/.svc/settings.yaml: valid (1 warning(s)).
      "
    `)
    const none = await svc(['config', 'validate'], {cwd: home})
    expect(none).toMatchObject({code: 0, stdout: 'No settings files found.\n'})
    const missing = await svc(['config', 'validate', 'nope.yaml', '--json'])
    expect(missing.code).toBe(2)
    expect(missing.json.error.code).toBe('usage_error')
  })
})
