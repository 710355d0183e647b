import {describe, expect, it} from 'vitest'
import {envSuffix, parseEnvValue, SERVER_KEYS, seedVariable, serverVariable} from './schema.js'

// The spec's Layer-1 seed table, verbatim.
const SEED_TABLE: Array<[string, string]> = [
  ['server.hub.admin_emails', 'SVC_SEED_SERVER_HUB_ADMINEMAILS'],
  ['server.hub.public_url', 'SVC_SEED_SERVER_HUB_PUBLICURL'],
  ['server.auth.user_access_mode', 'SVC_SEED_SERVER_AUTH_USERACCESSMODE'],
  ['server.auth.authorized_domains', 'SVC_SEED_SERVER_AUTH_AUTHORIZEDDOMAINS'],
  ['server.auth.default_user_role', 'SVC_SEED_SERVER_AUTH_DEFAULTUSERROLE'],
  ['server.hub.auto_suspend_stalled', 'SVC_SEED_SERVER_HUB_AUTOSUSPENDSTALLED'],
  ['server.hub.soft_delete_retain_files', 'SVC_SEED_SERVER_HUB_SOFTDELETERETAINFILES'],
  ['image_registry', 'SVC_SEED_IMAGEREGISTRY'],
  ['telemetry.enabled', 'SVC_SEED_TELEMETRY_ENABLED'],
  ['server.github_app.webhooks_enabled', 'SVC_SEED_SERVER_GITHUBAPP_WEBHOOKSENABLED'],
]

// The spec's Layer-0 variables.
const LAYER_0_VARIABLES: Array<[string, string]> = [
  ['server.hub.port', 'SVC_SERVER_HUB_PORT'],
  ['server.hub.host', 'SVC_SERVER_HUB_HOST'],
  ['server.database.driver', 'SVC_SERVER_DATABASE_DRIVER'],
  ['server.database.url', 'SVC_SERVER_DATABASE_URL'],
  ['server.auth.dev_mode', 'SVC_SERVER_AUTH_DEVMODE'],
  ['server.secrets.backend', 'SVC_SERVER_SECRETS_BACKEND'],
  ['server.mode', 'SVC_SERVER_MODE'],
  ['server.log_level', 'SVC_SERVER_LOGLEVEL'],
  ['server.admin_mode', 'SVC_SERVER_ADMIN_MODE'],
]

describe('environment variable names', () => {
  it.each(SEED_TABLE)('%s is seeded by %s', (key, variable) => {
    expect(seedVariable(key)).toBe(variable)
  })

  it.each(LAYER_0_VARIABLES)('%s is set by %s', (key, variable) => {
    expect(serverVariable(key)).toBe(variable)
  })

  it('keys outside server.* have no SVC_SERVER_* variable', () => {
    expect(serverVariable('image_registry')).toBeNull()
    expect(serverVariable('telemetry.enabled')).toBeNull()
  })

  it('envSuffix upper-cases segments and drops inner underscores', () => {
    expect(envSuffix('server.hub.admin_emails')).toBe('SERVER_HUB_ADMINEMAILS')
    expect(envSuffix('image_registry')).toBe('IMAGEREGISTRY')
  })

  it('the seed table keys the Hub reads are typed in SERVER_KEYS', () => {
    // server.github_app.* is not read by the foundation yet.
    for (const [key] of SEED_TABLE.filter(([k]) => !k.startsWith('server.github_app.'))) {
      expect(['string', 'bool', 'list'], key).toContain(SERVER_KEYS[key]?.type)
    }
  })
})

describe('parseEnvValue', () => {
  const spec = (type: 'string' | 'int' | 'bool' | 'list' | 'map', oneOf?: string[]) => ({type, doc: '', oneOf})

  it('parses by type', () => {
    expect(parseEnvValue('V', spec('int'), ' 8080 ')).toBe(8080)
    expect(parseEnvValue('V', spec('bool'), 'On')).toBe(true)
    expect(parseEnvValue('V', spec('bool'), '')).toBe(false)
    expect(parseEnvValue('V', spec('list'), 'a, b,,c')).toEqual(['a', 'b', 'c'])
    expect(parseEnvValue('V', spec('map'), '{"a":1}')).toEqual({a: 1})
    expect(parseEnvValue('V', spec('string'), 'x y')).toBe('x y')
  })

  it.each([
    ['int', '12a'],
    ['int', '1.5'],
    ['bool', 'maybe'],
    ['map', '{nope'],
  ] as const)('a bad %s value %j is refused naming the variable', (type, raw) => {
    expect(() => parseEnvValue('SVC_X', spec(type), raw)).toThrow(new RegExp(`^SVC_X: expected .*found "${raw.replace(/[{.]/g, '\\$&')}"`))
  })

  it('a string outside its allowed values is refused (case-sensitive)', () => {
    expect(parseEnvValue('SVC_D', spec('string', ['sqlite', 'postgres']), 'postgres')).toBe('postgres')
    expect(() => parseEnvValue('SVC_D', spec('string', ['sqlite', 'postgres']), 'Postgres')).toThrow('SVC_D: expected one of sqlite, postgres, found "Postgres"')
  })
})
