/**
 * The one table that classifies settings keys into layers (spec "Settings sections and layers").
 *
 * - layer 0 (bootstrap): always resolved from the settings file and environment.
 * - layer 1 (operational): stored in the Hub database in the named section; the database value
 *   wins over the bootstrap merge.
 * - file: bootstrap keys with no database home (written to the settings file on workstation Hubs).
 *
 * Patterns are dotted paths; a trailing `.*` covers the whole subtree.
 */
export type KeyClass =
  | {layer: 0}
  | {layer: 1; section: string}
  | {layer: 'file'}

interface Rule {
  pattern: string
  cls: KeyClass
}

const L0: KeyClass = {layer: 0}
const FILE: KeyClass = {layer: 'file'}
const l1 = (section: string): KeyClass => ({layer: 1, section})

export const KEY_CLASS_RULES: readonly Rule[] = [
  // Layer 0
  {pattern: 'server.mode', cls: L0},
  {pattern: 'server.database.*', cls: L0},
  {pattern: 'server.storage.*', cls: L0},
  {pattern: 'server.secrets.*', cls: L0},
  {pattern: 'server.hub.port', cls: L0},
  {pattern: 'server.auth.dev_mode', cls: L0},
  // Layer 1
  {pattern: 'server.hub.admin_emails', cls: l1('hub')},
  {pattern: 'server.hub.public_url', cls: l1('hub')},
  {pattern: 'server.hub.hub_name', cls: l1('hub')},
  {pattern: 'server.hub.auto_suspend_stalled', cls: l1('hub')},
  {pattern: 'server.hub.soft_delete_retain_files', cls: l1('hub')},
  {pattern: 'server.auth.user_access_mode', cls: l1('auth')},
  {pattern: 'server.auth.default_user_role', cls: l1('auth')},
  {pattern: 'server.auth.authorized_domains', cls: l1('auth')},
  {pattern: 'image_registry', cls: l1('image_registry')},
  {pattern: 'telemetry.*', cls: l1('telemetry')},
  {pattern: 'default_*', cls: l1('agent_defaults')},
  {pattern: 'server.github_app.*', cls: l1('github_app')},
  {pattern: 'server.notification_channels', cls: l1('notification_channels')},
  {pattern: 'server.federation.*', cls: l1('federation')},
  {pattern: 'runtimes', cls: l1('runtimes')},
  {pattern: 'profiles', cls: l1('profiles')},
  {pattern: 'harness_configs', cls: l1('harness_configs')},
  {pattern: 'auto_expose_ports.enabled', cls: l1('auto_expose_ports')},
  {pattern: 'workspace.*', cls: l1('workspace')},
  {pattern: 'quotas.*', cls: l1('quotas')},
  {pattern: 'agent_secrets.user_scope_only', cls: l1('agent_secrets')},
  {pattern: 'approvals.rules', cls: l1('approvals')},
  {pattern: 'project_defaults.default_scratchpad', cls: l1('project_defaults')},
  {pattern: 'profiling.readiness_marks', cls: l1('profiling')},
  // Bootstrap keys with no database home
  {pattern: 'server.log_level', cls: FILE},
  {pattern: 'server.admin_mode', cls: FILE},
  {pattern: 'server.hub.host', cls: FILE},
  {pattern: 'server.hub.cors.*', cls: FILE},
  {pattern: 'server.broker.*', cls: FILE},
  {pattern: 'server.auth.oidc.*', cls: FILE},
  {pattern: 'server.auth.session_ttl', cls: FILE},
  {pattern: 'server.retention.*', cls: FILE},
  {pattern: 'artifacts.max_file_bytes', cls: FILE},
]

function matches(pattern: string, key: string): boolean {
  if (pattern.endsWith('.*')) {
    const base = pattern.slice(0, -2)
    return key === base || key.startsWith(base + '.')
  }
  if (pattern.endsWith('*')) return !key.includes('.') && key.startsWith(pattern.slice(0, -1))
  return key === pattern || key.startsWith(pattern + '.')
}

/** Classifies a dotted key; null means the key has no settings home at all. */
export function classifyKey(key: string): KeyClass | null {
  for (const rule of KEY_CLASS_RULES) if (matches(rule.pattern, key)) return rule.cls
  return null
}
