/**
 * Typed descriptors of the settings keys the Hub and CLI read. One table serves validation,
 * defaults, environment parsing and docs/settings.md. Keys not listed here are kept as they are
 * (unknown keys survive, and are reported as warnings by validation).
 */
export type KeyType = 'string' | 'int' | 'bool' | 'list' | 'map'

export interface KeySpec {
  type: KeyType
  default?: unknown
  doc: string
  /** Values allowed for a string key (checked case-sensitively). */
  oneOf?: readonly string[]
  /** Name of the environment variable when it does not follow the mechanical mapping. */
  env?: string
}

export const SERVER_KEYS: Record<string, KeySpec> = {
  'server.mode': {type: 'string', default: '', doc: 'Deployment mode: empty or `workstation`, `hosted` (`production` is the legacy name of hosted).'},
  'server.log_level': {type: 'string', default: 'info', oneOf: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], doc: 'Log level; `--debug` and `SVC_LOG_LEVEL` take precedence.'},
  'server.admin_mode': {type: 'bool', default: false, env: 'SVC_SERVER_ADMIN_MODE', doc: 'Initial maintenance state, used until a maintenance row exists in the database.'},
  'server.hub.port': {type: 'int', default: 9810, doc: 'Port of the API, the web pages and /healthz.'},
  'server.hub.host': {type: 'string', default: '', doc: 'Bind address: 127.0.0.1 on workstation Hubs (forced), 0.0.0.0 by default on hosted Hubs.'},
  'server.hub.public_url': {type: 'string', default: '', doc: 'URL at which users reach the Hub; used for sign-in redirects and links.'},
  'server.hub.hub_name': {type: 'string', default: '', doc: 'Display name of the Hub.'},
  'server.hub.admin_emails': {type: 'list', default: [], doc: 'Users with these e-mail addresses are system admins.'},
  'server.hub.auto_suspend_stalled': {type: 'bool', default: false, doc: 'Suspend agents whose heartbeats stall.'},
  'server.hub.soft_delete_retain_files': {type: 'bool', default: false, doc: 'Keep files of soft-deleted agents.'},
  'server.database.driver': {type: 'string', default: 'sqlite', oneOf: ['sqlite', 'postgres'], doc: 'Database driver: `sqlite` (embedded) or `postgres`.'},
  'server.database.url': {type: 'string', default: '', doc: 'SQLite file path (default `~/.svc/hub.db`) or a `postgres://` URL.'},
  'server.storage.provider': {type: 'string', default: 'local', oneOf: ['local', 's3', 'none'], doc: 'Artifact and template storage: `local` (`~/.svc/storage/`), `s3`, or `none`.'},
  'server.storage.path': {type: 'string', default: '', doc: 'Directory of local storage (default `~/.svc/storage/`).'},
  'server.storage.endpoint': {type: 'string', default: '', doc: 'S3-compatible endpoint URL.'},
  'server.storage.bucket': {type: 'string', default: '', doc: 'S3 bucket.'},
  'server.storage.region': {type: 'string', default: 'us-east-1', doc: 'S3 region.'},
  'server.storage.access_key_id': {type: 'string', default: '', doc: 'S3 access key ID.'},
  'server.storage.secret_access_key': {type: 'string', default: '', doc: 'S3 secret access key.'},
  'server.storage.force_path_style': {type: 'bool', doc: 'S3 path-style addressing (`endpoint/bucket/key`); default: on when `endpoint` is set, off otherwise.'},
  'server.secrets.backend': {type: 'string', default: 'local', doc: 'Secrets backend.'},
  'server.auth.dev_mode': {type: 'bool', doc: 'Write and accept the dev credential (on by default on workstation Hubs).'},
  'server.auth.user_access_mode': {type: 'string', default: 'open', doc: 'Who may sign in: `open` or `domains` (see authorized_domains).'},
  'server.auth.authorized_domains': {type: 'list', default: [], doc: 'E-mail domains allowed to sign in when user_access_mode is `domains`.'},
  'server.auth.default_user_role': {type: 'string', default: 'member', doc: 'Role of a new user.'},
  'server.retention.deleted_agent_logs': {type: 'string', default: '7d', doc: 'How long a deleted agent\'s output stays readable by its ID (`svc agent logs <id>`, `GET .../logs`), counted from the deletion (a duration: 12h, 7d, 30d; `0s` keeps none); later it is removed.'},
  'server.auth.session_ttl': {type: 'string', default: '720h', doc: 'Lifetime of an interactive session (Go-style duration: 30m, 12h, 720h); anything else, or less than 1m, stops start-up.'},
  'server.auth.oidc.issuer_url': {type: 'string', default: '', doc: 'OpenID Connect issuer for interactive sign-in.'},
  'server.auth.oidc.client_id': {type: 'string', default: '', doc: 'OpenID Connect client ID.'},
  'server.auth.oidc.client_secret': {type: 'string', default: '', doc: 'OpenID Connect client secret.'},
  'server.auth.oidc.scopes': {type: 'list', default: ['openid', 'email', 'profile'], doc: 'Scopes requested at sign-in.'},
  'server.broker.enabled': {type: 'bool', doc: 'Run the co-located runtime broker (forced on for workstation Hubs).'},
  'server.broker.port': {type: 'int', default: 9800, doc: 'Port of the co-located runtime broker.'},
  'server.broker.host': {type: 'string', default: '127.0.0.1', doc: 'Bind address of the co-located broker.'},
  'server.broker.runtime': {type: 'string', default: '', doc: 'Default runtime of the co-located broker (`local`, `docker`, `podman`, `kubernetes` or a `runtimes` name); empty: the one chosen at its first start, kept in `~/.svc/broker/runtime.json`.'},
  'server.broker.broker_id': {type: 'string', default: '', doc: 'Identity of the co-located broker (written by the Hub).'},
  'server.broker.broker_token': {type: 'string', default: '', doc: 'Secret of the co-located broker (written by the Hub).'},
  'image_registry': {type: 'string', default: '', doc: 'Registry prefix rewriting the registry of standard harness images.'},
  'telemetry.enabled': {type: 'bool', default: false, doc: 'Telemetry on or off.'},
  'artifacts.max_file_bytes': {type: 'int', default: 32 * 1024 * 1024, env: 'SVC_ARTIFACTS_MAXFILEBYTES', doc: 'Largest artifact file the Hub accepts, in bytes (32 MiB); larger uploads are refused with 413 `file_too_large` before anything is stored.'},
}

/** `server.hub.admin_emails` -> `SERVER_HUB_ADMINEMAILS`: segments joined by `_`, inner `_` dropped. */
export function envSuffix(key: string): string {
  return key.split('.').map((s) => s.replace(/_/g, '').toUpperCase()).join('_')
}

export function seedVariable(key: string): string {
  return 'SVC_SEED_' + envSuffix(key)
}

/** `SVC_SERVER_*` variable of a `server.*` key (null for other keys). */
export function serverVariable(key: string): string | null {
  const spec = SERVER_KEYS[key]
  if (spec?.env) return spec.env
  return key.startsWith('server.') ? 'SVC_' + envSuffix(key) : null
}

/** Parses an environment value by the key's type; throws a message naming the variable. */
export function parseEnvValue(variable: string, spec: KeySpec, raw: string): unknown {
  switch (spec.type) {
    case 'bool': {
      const v = raw.trim().toLowerCase()
      if (['true', '1', 'yes', 'on'].includes(v)) return true
      if (['false', '0', 'no', 'off', ''].includes(v)) return false
      throw new Error(`${variable}: expected true or false, found "${raw}"`)
    }
    case 'int': {
      if (!/^\s*\d+\s*$/.test(raw)) throw new Error(`${variable}: expected a whole number, found "${raw}"`)
      return Number(raw.trim())
    }
    case 'list':
      return raw.split(',').map((s) => s.trim()).filter(Boolean)
    case 'map':
      try {
        return JSON.parse(raw)
      } catch {
        throw new Error(`${variable}: expected a JSON object, found "${raw}"`)
      }
    default:
      if (spec.oneOf && !spec.oneOf.includes(raw)) throw new Error(`${variable}: expected one of ${spec.oneOf.join(', ')}, found "${raw}"`)
      return raw
  }
}
