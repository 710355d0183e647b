import {SETTINGS_SCHEMA} from './settings-schema.js'
import {typeName} from './types.js'
import {schemaRows} from './walk.js'

/** The settable keys for `svc config set --help`: one line each, `key  type  (default)`. */
export function settingsKeyHelp(): string {
  const rows = schemaRows(SETTINGS_SCHEMA).filter((r) => r.node.kind !== 'object' && !(r.node.kind === 'map' && r.node.values.kind === 'object') && !r.key.includes('[]'))
  const w = Math.max(...rows.map((r) => r.key.length))
  return rows
    .map((r) => {
      const d = 'default' in r.node && r.node.default !== undefined ? `  (default ${JSON.stringify(r.node.default)})` : ''
      return `  ${r.key.padEnd(w)}  ${typeName(r.node)}${d}`
    })
    .join('\n')
}
