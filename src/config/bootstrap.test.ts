import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {BootstrapError, parseMode, resolveBootstrap, type StartFlags} from './bootstrap.js'
import {ConfigError} from './yaml-file.js'

/** A temp HOME with the given files (paths relative to HOME). */
function home(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-boot-'))
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), {recursive: true})
    writeFileSync(join(dir, rel), text)
  }
  return dir
}

const GLOBAL = '.svc/settings.yaml'
const LEGACY = '.svc/server.yaml'
const V1 = 'schema_version: "1"\n'

function resolve(files: Record<string, string>, env: Record<string, string> = {}, flags: StartFlags = {}) {
  const h = home(files)
  const b = resolveBootstrap(flags, {HOME: h, ...env})
  return {...b, home: h}
}

function refusal(fn: () => unknown): Error {
  try {
    fn()
  } catch (err) {
    return err as Error
  }
  throw new Error('expected a refusal')
}

describe('resolveBootstrap: defaults', () => {
  it('with no files and no variables runs a workstation Hub on the embedded database', () => {
    const b = resolve({})
    expect(b.mode).toBe('workstation')
    expect(b.values['server.hub.port']).toBe(9810)
    expect(b.values['server.database.driver']).toBe('sqlite')
    expect(b.values['server.database.url']).toBe(join(b.home, '.svc', 'hub.db'))
    expect(b.origins['server.hub.port']).toBe('default')
    expect(b.logLevel).toBe('info')
    expect(b.files).toEqual({settings: null, legacy: null})
  })
})

describe('resolveBootstrap: resolution order', () => {
  // A Layer-1 key on a hosted Hub (no forced value): defaults < SVC_SEED_* < file < SVC_SERVER_*.
  const key = 'server.hub.public_url'
  const file = `${V1}server:\n  mode: hosted\n  hub:\n    public_url: https://file.example\n`

  it('coded default when nothing sets the key', () => {
    const b = resolve({[GLOBAL]: `${V1}server:\n  mode: hosted\n`})
    expect([b.values[key], b.origins[key]]).toEqual(['', 'default'])
  })

  it('SVC_SEED_* over the default', () => {
    const b = resolve({[GLOBAL]: `${V1}server:\n  mode: hosted\n`}, {SVC_SEED_SERVER_HUB_PUBLICURL: 'https://seed.example'})
    expect([b.values[key], b.origins[key]]).toEqual(['https://seed.example', 'seed'])
  })

  it('the settings file over SVC_SEED_*', () => {
    const b = resolve({[GLOBAL]: file}, {SVC_SEED_SERVER_HUB_PUBLICURL: 'https://seed.example'})
    expect([b.values[key], b.origins[key]]).toEqual(['https://file.example', 'file'])
  })

  it('SVC_SERVER_* over the settings file', () => {
    const b = resolve({[GLOBAL]: file}, {SVC_SEED_SERVER_HUB_PUBLICURL: 'https://seed.example', SVC_SERVER_HUB_PUBLICURL: 'https://env.example'})
    expect([b.values[key], b.origins[key]]).toEqual(['https://env.example', 'env'])
  })

  it('Layer-0 port: file < SVC_SERVER_HUB_PORT < --port', () => {
    const f = {[GLOBAL]: `${V1}server:\n  hub:\n    port: 2222\n`}
    expect(resolve(f).values['server.hub.port']).toBe(2222)
    expect(resolve(f, {SVC_SERVER_HUB_PORT: '3333'}).values['server.hub.port']).toBe(3333)
    const b = resolve(f, {SVC_SERVER_HUB_PORT: '3333'}, {port: 4444})
    expect([b.values['server.hub.port'], b.origins['server.hub.port']]).toEqual([4444, 'flag'])
  })

  it('workstation forced values override file and SVC_SERVER_*; start flags override those', () => {
    const f = {[GLOBAL]: `${V1}server:\n  hub:\n    host: 0.0.0.0\n  auth:\n    dev_mode: false\n  broker:\n    enabled: false\n  storage:\n    provider: s3\n`}
    const b = resolve(f, {SVC_SERVER_HUB_HOST: '10.0.0.1', SVC_SERVER_AUTH_DEVMODE: 'false', SVC_SERVER_SECRETS_BACKEND: 'vault'})
    expect(b.values['server.hub.host']).toBe('127.0.0.1')
    expect(b.origins['server.hub.host']).toBe('workstation')
    expect(b.values['server.auth.dev_mode']).toBe(true)
    expect(b.values['server.broker.enabled']).toBe(true)
    expect(b.values['server.broker.host']).toBe('127.0.0.1')
    expect(b.values['server.storage.provider']).toBe('local')
    expect(b.values['server.secrets.backend']).toBe('local')
    const flagged = resolve(f, {SVC_SERVER_HUB_HOST: '10.0.0.1'}, {host: '0.0.0.0'})
    expect([flagged.values['server.hub.host'], flagged.origins['server.hub.host']]).toEqual(['0.0.0.0', 'flag'])
  })

  it('a hosted Hub keeps file values and defaults host 0.0.0.0, dev mode off, broker off', () => {
    const b = resolve({[GLOBAL]: `${V1}server:\n  mode: hosted\n`})
    expect(b.mode).toBe('hosted')
    expect(b.values['server.hub.host']).toBe('0.0.0.0')
    expect(b.values['server.auth.dev_mode']).toBe(false)
    expect(b.values['server.broker.enabled']).toBe(false)
    const on = resolve({[GLOBAL]: `${V1}server:\n  mode: hosted\n  hub:\n    host: 10.1.2.3\n  auth:\n    dev_mode: true\n`})
    expect(on.values['server.hub.host']).toBe('10.1.2.3')
    expect(on.values['server.auth.dev_mode']).toBe(true)
  })

  it('booleans in variables accept true/false/1/0/yes/no/on/off and lists are comma-separated', () => {
    for (const [raw, want] of [['yes', true], ['on', true], ['1', true], ['TRUE', true], ['no', false], ['off', false], ['0', false]] as const) {
      expect(resolve({}, {SVC_SEED_SERVER_HUB_AUTOSUSPENDSTALLED: raw}).values['server.hub.auto_suspend_stalled']).toBe(want)
    }
    expect(resolve({}, {SVC_SEED_SERVER_HUB_ADMINEMAILS: 'a@x.io, b@y.io,'}).values['server.hub.admin_emails']).toEqual(['a@x.io', 'b@y.io'])
  })
})

describe('resolveBootstrap: --config selection (spec rules 1-3)', () => {
  it('rule 1: the global file has a server key: it is used and the --config file is not read', () => {
    const h = home({[GLOBAL]: `${V1}server:\n  hub:\n    port: 1111\n`, 'hub.yaml': 'server: [this is: not yaml\n'})
    const b = resolveBootstrap({config: join(h, 'hub.yaml')}, {HOME: h})
    expect(b.values['server.hub.port']).toBe(1111)
    expect(b.files.settings).toBe(join(h, GLOBAL))
    expect(b.warnings.join('\n')).toContain('hub.yaml is not read')
  })

  it('rule 2: only --config has a server key: server block and hub sections from it, the rest from the global file', () => {
    const h = home({
      [GLOBAL]: `${V1}image_registry: global.example\nruntimes:\n  r1: {type: docker}\ntelemetry:\n  enabled: false\ndefault_timezone: UTC\nquotas:\n  enforce_broker_quotas: true\n`,
      'hub.yaml': `${V1}server:\n  hub:\n    port: 2222\nimage_registry: config.example\nruntimes:\n  r2: {type: podman}\ntelemetry:\n  enabled: true\ndefault_timezone: Europe/Paris\ndefault_cloud_identity_mode: Block\nquotas:\n  enforce_broker_quotas: false\nagent_secrets:\n  user_scope_only: true\nproject_defaults:\n  default_scratchpad: x\ndefault_harness_config: h\n`,
    })
    const b = resolveBootstrap({config: join(h, 'hub.yaml')}, {HOME: h})
    expect(b.values['server.hub.port']).toBe(2222)
    expect(b.values['telemetry.enabled']).toBe(true)
    expect(b.values.image_registry).toBe('global.example')
    expect(b.tree.runtimes).toEqual({r1: {type: 'docker'}})
    expect(b.tree.default_timezone).toBe('Europe/Paris')
    expect(b.tree.default_cloud_identity_mode).toBe('Block')
    expect(b.tree.quotas).toEqual({enforce_broker_quotas: false})
    expect(b.tree.agent_secrets).toEqual({user_scope_only: true})
    expect(b.tree.project_defaults).toEqual({default_scratchpad: 'x'})
    expect(b.tree.default_harness_config).toBe('h')
    expect(b.files.settings).toBe(join(h, 'hub.yaml'))
  })

  it('rule 3: neither has a server key and a global file exists: the --config file is not used', () => {
    const h = home({[GLOBAL]: `${V1}image_registry: global.example\n`, 'hub.yaml': `${V1}image_registry: config.example\n`})
    const b = resolveBootstrap({config: join(h, 'hub.yaml')}, {HOME: h})
    expect(b.values.image_registry).toBe('global.example')
  })

  it('rule 3: neither has a server key and no global file exists: the --config file is used, the legacy file layered', () => {
    const h = home({'hub.yaml': `${V1}image_registry: config.example\n`, [LEGACY]: 'hub:\n  port: 3333\n'})
    const b = resolveBootstrap({config: join(h, 'hub.yaml')}, {HOME: h})
    expect(b.values.image_registry).toBe('config.example')
    expect(b.values['server.hub.port']).toBe(3333)
    expect(b.files).toEqual({settings: join(h, 'hub.yaml'), legacy: join(h, LEGACY)})
    expect(b.warnings.join('\n')).toMatch(/deprecated server config file/)
  })

  it('without --config the legacy ~/.svc/server.yaml supplies the server block when the global file has none', () => {
    expect(resolve({[GLOBAL]: V1, [LEGACY]: 'hub:\n  port: 4444\n'}).values['server.hub.port']).toBe(4444)
    expect(resolve({[LEGACY]: 'hub:\n  port: 4444\n'}).values['server.hub.port']).toBe(4444)
    const ignored = resolve({[GLOBAL]: `${V1}server:\n  hub:\n    port: 1111\n`, [LEGACY]: 'hub:\n  port: 4444\n'})
    expect(ignored.values['server.hub.port']).toBe(1111)
    expect(ignored.files.legacy).toBeNull()
  })

  it('a wrong type in the legacy file is named as its server.* key', () => {
    const err = refusal(() => resolve({[LEGACY]: 'hub:\n  port: abc\n'}))
    expect(err).toBeInstanceOf(ConfigError)
    expect(err.message).toContain('server.hub.port')
    expect(err.message).toContain(':2:9:')
  })

  it('a missing --config file is refused', () => {
    const err = refusal(() => resolveBootstrap({config: '/nonexistent/hub.yaml'}, {HOME: home()}))
    expect(err).toBeInstanceOf(BootstrapError)
    expect(err.message).toContain('/nonexistent/hub.yaml')
  })
})

describe('resolveBootstrap: mode', () => {
  it.each([
    ['', 'workstation'],
    ['workstation', 'workstation'],
    ['hosted', 'hosted'],
    ['production', 'hosted'],
  ])('server.mode %j is %s', (raw, want) => {
    expect(parseMode(raw)).toBe(want)
    expect(resolve({}, {SVC_SERVER_MODE: raw}).mode).toBe(want)
    expect(resolve({[GLOBAL]: `${V1}server:\n  mode: "${raw}"\n`}).mode).toBe(want)
  })

  it.each(['bogus', 'Hosted', 'HOSTED', 'Workstation', 'Production', ' hosted', 'hosted '])('server.mode %j is refused naming the value', (raw) => {
    for (const fn of [() => resolve({}, {SVC_SERVER_MODE: raw}), () => resolve({[GLOBAL]: `${V1}server:\n  mode: "${raw}"\n`})]) {
      const err = refusal(fn)
      expect(err).toBeInstanceOf(BootstrapError)
      expect(err.message).toContain(`"${raw}"`)
    }
  })

  it('an absent mode means workstation', () => {
    expect(parseMode(undefined)).toBe('workstation')
    expect(parseMode(null)).toBe('workstation')
  })

  it('SVC_SERVER_MODE overrides the file', () => {
    expect(resolve({[GLOBAL]: `${V1}server:\n  mode: workstation\n`}, {SVC_SERVER_MODE: 'hosted'}).mode).toBe('hosted')
  })

  it('--hosted makes a hosted Hub, but a bad configured mode is still refused', () => {
    const b = resolve({}, {}, {hosted: true})
    expect(b.mode).toBe('hosted')
    expect(b.origins['server.mode']).toBe('flag')
    expect(refusal(() => resolve({}, {SVC_SERVER_MODE: 'bogus'}, {hosted: true})).message).toContain('bogus')
  })
})

describe('resolveBootstrap: log level', () => {
  const f = {[GLOBAL]: `${V1}server:\n  log_level: warn\n`}
  it('server.log_level, then SVC_SERVER_LOGLEVEL, then SVC_LOG_LEVEL, then --debug', () => {
    expect(resolve(f).logLevel).toBe('warn')
    expect(resolve(f, {SVC_SERVER_LOGLEVEL: 'error'}).logLevel).toBe('error')
    expect(resolve(f, {SVC_SERVER_LOGLEVEL: 'error', SVC_LOG_LEVEL: 'trace'}).logLevel).toBe('trace')
    expect(resolve(f, {SVC_LOG_LEVEL: 'trace'}, {debug: true}).logLevel).toBe('debug')
  })
  it('a bad level is refused naming where it came from', () => {
    expect(refusal(() => resolve({}, {SVC_LOG_LEVEL: 'loud'})).message).toMatch(/SVC_LOG_LEVEL.*"loud"/)
    expect(refusal(() => resolve({}, {SVC_SERVER_LOGLEVEL: 'loud'})).message).toMatch(/SVC_SERVER_LOGLEVEL.*"loud"/)
  })
})

describe('resolveBootstrap: refusals', () => {
  it.each([
    ['SVC_SERVER_HUB_PORT', 'abc'],
    ['SVC_SERVER_HUB_PORT', '-1'],
    ['SVC_SERVER_AUTH_DEVMODE', 'maybe'],
    ['SVC_SERVER_ADMIN_MODE', 'sometimes'],
    ['SVC_SEED_SERVER_HUB_AUTOSUSPENDSTALLED', 'perhaps'],
    ['SVC_SEED_TELEMETRY_ENABLED', 'nah'],
    ['SVC_SERVER_DATABASE_DRIVER', 'mysql'],
  ])('%s=%s is refused naming the variable and the value', (variable, raw) => {
    const err = refusal(() => resolve({}, {[variable]: raw}))
    expect(err).toBeInstanceOf(BootstrapError)
    expect(err.message).toContain(variable)
    expect(err.message).toContain(`"${raw}"`)
  })

  it('a port outside 0-65535 is refused naming where it came from', () => {
    expect(refusal(() => resolve({}, {SVC_SERVER_HUB_PORT: '70000'})).message).toMatch(/^SVC_SERVER_HUB_PORT: .*70000/)
    expect(refusal(() => resolve({[GLOBAL]: `${V1}server:\n  broker:\n    port: 65536\n`})).message).toMatch(/^server\.broker\.port: .*65536/)
  })

  it('the postgres driver without a URL is refused', () => {
    const err = refusal(() => resolve({}, {SVC_SERVER_DATABASE_DRIVER: 'postgres'}))
    expect(err).toBeInstanceOf(BootstrapError)
    expect(err.message).toMatch(/server\.database\.url.*postgres/)
  })

  it('a settings file without schema_version is refused naming the file and the key', () => {
    const err = refusal(() => resolve({[GLOBAL]: 'server:\n  hub:\n    port: 1\n'})) as ConfigError
    expect(err).toBeInstanceOf(ConfigError)
    expect(err.key).toBe('schema_version')
    expect(err.message).toContain(join('.svc', 'settings.yaml'))
  })

  it('a schema_version other than "1" is refused at its line', () => {
    const err = refusal(() => resolve({[GLOBAL]: 'server: {}\nschema_version: "2"\n'})) as ConfigError
    expect(err).toBeInstanceOf(ConfigError)
    expect([err.key, err.line]).toEqual(['schema_version', 2])
    expect(err.message).toContain('found "2"')
  })

  it('a wrong type in the settings file names file, line, column and key', () => {
    const err = refusal(() => resolve({[GLOBAL]: `${V1}server:\n  hub:\n    port: abc\n`})) as ConfigError
    expect(err).toBeInstanceOf(ConfigError)
    expect(err.message).toBe(`${join(err.file)}:4:11: server.hub.port: expected a whole number, found the string "abc"`)
  })
})
