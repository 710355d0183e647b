import {SETTINGS_SCHEMA} from './settings-schema.js'
import {typeName} from './types.js'
import {schemaRows} from './walk.js'

/** The settable keys for `svc config set --help`, one line each: `key (type, default X)`; `server.*` summarised. */
export function settingsKeyHelp(): string {
  // Overrides repeat the harness configuration's fields: one line says where they go.
  const rows = schemaRows(SETTINGS_SCHEMA).filter(
    (r) => r.node.kind !== 'object' && !(r.node.kind === 'map' && r.node.values.kind === 'object') && !r.key.includes('[]') && !r.key.includes('.harness_overrides.') && !r.key.startsWith('server.'),
  )
  return [
    ...rows.map((r) => {
      const d = 'default' in r.node && r.node.default !== undefined ? `, default ${JSON.stringify(r.node.default)}` : ''
      return `  ${r.key} (${typeName(r.node)}${d})`
    }),
    '  profiles.<profile>.harness_overrides.<config>.<field> (as harness_configs.<config>.<field>)',
    '  server.* (the Hub\'s keys: see docs/settings.md)',
  ].join('\n')
}
