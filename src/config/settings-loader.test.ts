import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {loadCliSettings} from './cli-settings.js'
import {SERVER_KEYS} from './schema.js'
import {SETTINGS_SCHEMA} from './schema/settings-schema.js'
import {envOverrides, nodeAt} from './schema/walk.js'
import {formatIssue} from './settings-issues.js'
import {loadSettings, type LoadedSettings} from './settings-loader.js'

function setup(global: string | null, project: string | null) {
  const root = mkdtempSync(join(tmpdir(), 'svc-load-'))
  const home = join(root, 'home')
  const repo = join(root, 'repo')
  mkdirSync(join(home, '.svc'), {recursive: true})
  mkdirSync(join(repo, 'sub'), {recursive: true})
  if (global !== null) writeFileSync(join(home, '.svc', 'settings.yaml'), global)
  if (project !== null) {
    mkdirSync(join(repo, '.svc'))
    writeFileSync(join(repo, '.svc', 'settings.yaml'), project)
  }
  return {home, repo, globalFile: join(home, '.svc', 'settings.yaml'), projectFile: join(repo, '.svc', 'settings.yaml')}
}

const value = (s: LoadedSettings, key: string) => s.values.find((v) => v.key === key)

describe('loadSettings: layers and origins', () => {
  it('merges defaults, global, project, then SVC_* variables; each value knows its origin', async () => {
    const t = setup(
      'schema_version: "1"\nhub:\n  endpoint: http://global\n  grove_id: g-global\ndefault_template: t-global\ntelemetry:\n  cloud:\n    endpoint: otel-global\n    protocol: http\n',
      'schema_version: "1"\nhub:\n  grove_id: g-project\ntelemetry:\n  cloud:\n    batch:\n      max_size: 10\n',
    )
    const s = await loadSettings({cwd: join(t.repo, 'sub'), env: {HOME: t.home, SVC_DEFAULT_TEMPLATE: 't-env', SVC_OTEL_INSECURE: 'true'}})
    expect(s.files).toEqual([{path: t.globalFile, scope: 'global', parsed: true}, {path: t.projectFile, scope: 'project', parsed: true}])
    expect(value(s, 'hub.endpoint')).toMatchObject({value: 'http://global', origin: 'global', file: t.globalFile, line: 3, column: 13})
    expect(value(s, 'hub.grove_id')).toMatchObject({value: 'g-project', origin: 'project', file: t.projectFile, line: 3})
    expect(value(s, 'default_template')).toMatchObject({value: 't-env', origin: 'environment', variable: 'SVC_DEFAULT_TEMPLATE'})
    // telemetry merges key by key, later wins
    expect(value(s, 'telemetry.cloud.endpoint')).toMatchObject({value: 'otel-global', origin: 'global'})
    expect(value(s, 'telemetry.cloud.protocol')).toMatchObject({value: 'http', origin: 'global'})
    expect(value(s, 'telemetry.cloud.batch.max_size')).toMatchObject({value: 10, origin: 'project'})
    expect(value(s, 'telemetry.cloud.batch.timeout')).toMatchObject({value: '5s', origin: 'default'})
    expect(value(s, 'telemetry.cloud.tls.insecure_skip_verify')).toMatchObject({value: true, origin: 'environment', variable: 'SVC_OTEL_INSECURE'})
    expect(s.issues).toEqual([])
  })

  it('reads nothing and imports no parser when there are no files; defaults only', async () => {
    const t = setup(null, null)
    const s = await loadSettings({cwd: t.repo, env: {HOME: t.home}})
    expect(s.files).toEqual([])
    expect(value(s, 'cli.autohelp')).toMatchObject({value: true, origin: 'default'})
    expect(value(s, 'default_resources.memory')).toMatchObject({value: '2Gi', origin: 'default'})
  })

  it('an invalid value is an error and falls back to the layer below; unknown keys are kept as warnings', async () => {
    const t = setup('schema_version: "1"\ndefault_max_turns: 5\n', 'schema_version: "1"\ndefault_max_turns: lots\nx_custom:\n  a: 1\n')
    const s = await loadSettings({cwd: t.repo, env: {HOME: t.home}})
    expect(value(s, 'default_max_turns')).toMatchObject({value: 5, origin: 'global'})
    expect(s.tree.x_custom).toEqual({a: 1})
    expect(value(s, 'x_custom.a')).toMatchObject({value: 1, origin: 'project', known: false})
    expect(s.issues.map(formatIssue)).toEqual([
      `${t.projectFile}:2:20: default_max_turns: expected a whole number of at least 1, found the string "lots"`,
      `${t.projectFile}:3:1: warning: x_custom: unknown key (kept as it is)`,
    ])
  })

  it('a map key holding dots is shown quoted, as svc config reads it', async () => {
    const t = setup('schema_version: "1"\ntelemetry:\n  filter:\n    sampling:\n      rates: {agent.tool: 0.5}\n', null)
    const s = await loadSettings({cwd: t.repo, env: {HOME: t.home}})
    expect(value(s, 'telemetry.filter.sampling.rates."agent.tool"')).toMatchObject({value: 0.5, origin: 'global', line: 5})
  })

  it('a bad SVC_* value is reported naming the variable and ignored', async () => {
    const t = setup(null, null)
    const s = await loadSettings({cwd: t.repo, env: {HOME: t.home, SVC_CLI_AUTOHELP: 'perhaps', SVC_OTEL_PROTOCOL: 'udp'}})
    expect(value(s, 'cli.autohelp')).toMatchObject({value: true, origin: 'default'})
    expect(s.issues.map(formatIssue)).toEqual([
      'SVC_CLI_AUTOHELP: cli.autohelp: expected true or false, found "perhaps"',
      'SVC_OTEL_PROTOCOL: telemetry.cloud.protocol: expected one of "grpc", "http", found "udp"',
    ])
  })

  it('a file that cannot be parsed is reported with its position; the CLI refuses it (config_invalid, file:line)', async () => {
    const t = setup('schema_version: "1"\nhub: [unclosed\n', null)
    const s = await loadSettings({cwd: t.repo, env: {HOME: t.home}})
    expect(s.issues[0]).toMatchObject({severity: 'error', file: t.globalFile, line: 3})
    await expect(loadCliSettings(t.repo, {HOME: t.home, SVC_HUB_ENDPOINT: 'http://env'})).rejects.toMatchObject({code: 'config_invalid', message: expect.stringContaining(`${t.globalFile}:3`)})
  })
})

describe('the active profile', () => {
  const global = `schema_version: "1"
image_registry: registry.example/top
default_template: top-template
runtimes:
  docker:
    type: docker
    env: {SHARED: runtime, ONLY_RUNTIME: "1"}
  k8s:
    type: kubernetes
    namespace: agents
harness_configs:
  claude:
    harness: claude
    model: opus
    env: {A: "1"}
profiles:
  default:
    runtime: docker
    env: {SHARED: profile}
  cluster:
    runtime: k8s
    image_registry: registry.example/cluster
    default_template: cluster-template
    harness_overrides:
      claude: {model: sonnet, env: {B: "2"}}
    secrets:
      - key: GH_TOKEN
`
  it('without active_profile, the profile named default; its env is merged into the runtime env', async () => {
    const t = setup(global, null)
    const s = await loadSettings({cwd: t.repo, env: {HOME: t.home}})
    expect(s.profile).toMatchObject({
      name: 'default',
      runtime: {name: 'docker', type: 'docker', gke: false, env: {SHARED: 'profile', ONLY_RUNTIME: '1'}},
      imageRegistry: 'registry.example/top',
      defaultTemplate: 'top-template',
      harnessConfigs: {claude: {harness: 'claude', model: 'opus', env: {A: '1'}}},
    })
  })

  it('SVC_ACTIVE_PROFILE picks a profile; its registry, template and harness overrides win', async () => {
    const t = setup(global, null)
    const s = await loadSettings({cwd: t.repo, env: {HOME: t.home, SVC_ACTIVE_PROFILE: 'cluster'}})
    expect(s.profile).toMatchObject({
      name: 'cluster',
      runtime: {name: 'k8s', type: 'kubernetes', namespace: 'agents'},
      imageRegistry: 'registry.example/cluster',
      defaultTemplate: 'cluster-template',
      harnessConfigs: {claude: {harness: 'claude', model: 'sonnet', env: {A: '1', B: '2'}}},
      secrets: [{key: 'GH_TOKEN', type: 'environment'}],
    })
  })

  it('a profile whose runtime names no runtime, and an unknown active profile, are errors at their position', async () => {
    const t = setup(global, 'schema_version: "1"\nactive_profile: nope\nprofiles:\n  broken:\n    runtime: podman\n')
    const s = await loadSettings({cwd: t.repo, env: {HOME: t.home}})
    expect(s.profile).toBeNull()
    expect(s.issues.map(formatIssue)).toEqual([
      `${t.projectFile}:5:14: profiles.broken.runtime: expected the name of a runtime ("docker", "k8s"), found "podman"`,
      `${t.projectFile}:2:17: active_profile: expected the name of a profile ("default", "cluster", "broken"), found "nope"`,
    ])
  })
})

describe('the schema', () => {
  it('has every SERVER_KEYS entry with the same type and default (bootstrap and settings agree)', () => {
    for (const [key, spec] of Object.entries(SERVER_KEYS)) {
      const node = nodeAt(key.split('.'))
      expect(node, key).toBeDefined()
      const kind = spec.type === 'list' ? 'list' : spec.type === 'map' ? 'map' : spec.type
      expect(node!.kind, key).toBe(kind)
      expect((node as {default?: unknown}).default, key).toEqual(spec.default)
    }
  })

  it('maps every settings-file override variable of the spec to its key', () => {
    expect(Object.fromEntries(envOverrides().map((o) => [o.variable, o.path.join('.')]))).toEqual({
      SVC_ACTIVE_PROFILE: 'active_profile',
      SVC_DEFAULT_TEMPLATE: 'default_template',
      SVC_HUB_ENDPOINT: 'hub.endpoint',
      SVC_HUB_GROVE_ID: 'hub.grove_id',
      SVC_CLI_AUTOHELP: 'cli.autohelp',
      SVC_TELEMETRY_ENABLED: 'telemetry.enabled',
      SVC_TELEMETRY_CLOUD_ENABLED: 'telemetry.cloud.enabled',
      SVC_OTEL_ENDPOINT: 'telemetry.cloud.endpoint',
      SVC_OTEL_PROTOCOL: 'telemetry.cloud.protocol',
      SVC_OTEL_INSECURE: 'telemetry.cloud.tls.insecure_skip_verify',
      SVC_TELEMETRY_HUB_ENABLED: 'telemetry.hub.enabled',
      SVC_TELEMETRY_DEBUG: 'telemetry.local.enabled',
    })
  })

  it('has the telemetry table of the spec, key by key', () => {
    const spec: Array<[string, string, unknown]> = [
      ['cloud.enabled', 'bool', true], ['cloud.endpoint', 'string', undefined], ['cloud.protocol', 'string', 'grpc'],
      ['cloud.headers', 'map', undefined], ['cloud.tls.enabled', 'bool', true], ['cloud.tls.insecure_skip_verify', 'bool', false],
      ['cloud.batch.max_size', 'int', 512], ['cloud.batch.timeout', 'string', '5s'], ['hub.enabled', 'bool', true],
      ['hub.report_interval', 'string', '30s'], ['local.enabled', 'bool', false], ['local.file', 'string', undefined],
      ['local.console', 'bool', false], ['filter.enabled', 'bool', true], ['filter.respect_debug_mode', 'bool', true],
      ['filter.events.include', 'list', []], ['filter.events.exclude', 'list', ['agent.user.prompt']],
      ['filter.attributes.redact', 'list', ['prompt', 'user.email', 'tool_output', 'tool_input']],
      ['filter.attributes.hash', 'list', ['session_id']], ['filter.sampling.default', 'float', 1.0],
      ['filter.sampling.rates', 'map', undefined], ['resource', 'map', undefined],
    ]
    for (const [key, kind, def] of spec) {
      const node = nodeAt(['telemetry', ...key.split('.')])
      expect(node?.kind, key).toBe(kind)
      expect((node as {default?: unknown}).default, key).toEqual(def)
    }
    expect((nodeAt(['telemetry', 'cloud', 'protocol']) as {oneOf?: string[]}).oneOf).toEqual(['grpc', 'http'])
  })

  it('knows the runtime types of the spec plus local, and the resource defaults', () => {
    expect((nodeAt(['runtimes', 'x', 'type']) as {oneOf?: string[]}).oneOf).toEqual(['docker', 'podman', 'container', 'kubernetes', 'local'])
    const r = (k: string) => (nodeAt(['default_resources', k]) as {default?: unknown}).default
    expect([r('cpu'), r('memory'), r('disk'), r('gpu')]).toEqual(['1', '2Gi', '10Gi', 0])
    expect(SETTINGS_SCHEMA.required).toEqual(['schema_version'])
  })
})
