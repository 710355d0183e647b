import {describe, expect, it} from 'vitest'
import {classifyKey} from './key-classes.js'
import {SERVER_KEYS} from './schema.js'

// The spec's lists ("Settings sections and layers"), one concrete key per entry; a `.*` entry
// is checked on the bare key and on keys below it.
const LAYER_0 = [
  'server.mode',
  'server.database.driver',
  'server.database.url',
  'server.storage.provider',
  'server.storage.bucket',
  'server.storage.anything.nested',
  'server.secrets.backend',
  'server.secrets.anything',
  'server.hub.port',
  'server.auth.dev_mode',
]

const LAYER_1 = [
  'server.hub.admin_emails',
  'server.auth.user_access_mode',
  'server.auth.default_user_role',
  'server.hub.public_url',
  'server.hub.hub_name',
  'image_registry',
  'telemetry.enabled',
  'telemetry.cloud.endpoint',
  'telemetry.filter.sampling.default',
  'default_template',
  'default_timezone',
  'default_max_turns',
  'default_cloud_identity_mode',
  'server.github_app.webhooks_enabled',
  'server.github_app.app_id',
  'server.notification_channels',
  'server.federation.trusted_issuers',
  'runtimes',
  'runtimes.docker.host',
  'profiles',
  'profiles.dev.runtime',
  'harness_configs',
  'harness_configs.claude.image',
  'auto_expose_ports.enabled',
  'quotas.enforce_broker_quotas',
  'agent_secrets.user_scope_only',
  'project_defaults.default_scratchpad',
  // Seed table keys not in the Layer-1 sentence, and the database-only profiling key.
  'server.auth.authorized_domains',
  'server.hub.auto_suspend_stalled',
  'server.hub.soft_delete_retain_files',
  'profiling.readiness_marks',
]

describe('classifyKey: the spec Layer-0 and Layer-1 lists', () => {
  it.each(LAYER_0)('%s is Layer-0', (key) => {
    expect(classifyKey(key)).toEqual({layer: 0})
  })

  it.each(LAYER_1)('%s is Layer-1', (key) => {
    expect(classifyKey(key)).toMatchObject({layer: 1})
  })

  it('Layer-1 keys name their database section', () => {
    expect(classifyKey('default_timezone')).toEqual({layer: 1, section: 'agent_defaults'})
    expect(classifyKey('server.hub.admin_emails')).toEqual({layer: 1, section: 'hub'})
    expect(classifyKey('runtimes')).toEqual({layer: 1, section: 'runtimes'})
    expect(classifyKey('quotas.enforce_broker_quotas')).toEqual({layer: 1, section: 'quotas'})
  })

  it('bootstrap keys the spec does not list as Layer-0 or Layer-1 have no database home', () => {
    for (const key of ['server.log_level', 'server.admin_mode', 'server.hub.host', 'server.broker.port', 'server.auth.oidc.issuer_url', 'server.auth.session_ttl']) {
      expect(classifyKey(key)).toEqual({layer: 'file'})
    }
  })

  it('`default_*` covers only top-level keys', () => {
    expect(classifyKey('profiles.dev.default_template')).toEqual({layer: 1, section: 'profiles'})
    expect(classifyKey('server.default_thing')).toBeNull()
  })

  it('keys with no settings home classify as null', () => {
    for (const key of ['nonsense', 'server.bogus', 'server.hub.portx', 'telemetryx', 'quotas_x']) expect(classifyKey(key)).toBeNull()
  })

  it('every typed settings key has a class', () => {
    for (const key of Object.keys(SERVER_KEYS)) expect(classifyKey(key), key).not.toBeNull()
  })
})
