import {SETTINGS_SCHEMA} from './settings-schema.js'
import {typeName, type ObjectNode, type SchemaNode} from './types.js'
import {schemaRows} from './walk.js'

export const DOCS_BEGIN = '<!-- BEGIN GENERATED: settings keys (npm run docs:settings; do not edit by hand) -->'
export const DOCS_END = '<!-- END GENERATED: settings keys -->'

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ')

function meaning(node: SchemaNode, required: boolean): string {
  const parts = [node.doc]
  if ((node.kind === 'string') && node.oneOf && node.oneOf.length > 1) parts.push(`One of ${node.oneOf.map((v) => `\`${v}\``).join(', ')}.`)
  if (node.kind === 'string' && node.format) parts.push(`Must be ${node.format.describe}.`)
  if ((node.kind === 'int' || node.kind === 'float') && node.min !== undefined) parts.push(node.max !== undefined ? `From ${node.min} to ${node.max}.` : `At least ${node.min}.`)
  if (required) parts.push('Required.')
  if (node.env) parts.push(`Overridden by \`${node.env}\`.`)
  return cell(parts.join(' '))
}

function defaultOf(node: SchemaNode): string {
  const d = (node as {default?: unknown}).default
  return d === undefined ? '' : `\`${JSON.stringify(d)}\``
}

function table(rows: Array<{key: string; node: SchemaNode; required: boolean}>): string {
  const out = ['| key | type | default | meaning |', '|---|---|---|---|']
  for (const r of rows) out.push(`| \`${r.key}\` | ${typeName(r.node)} | ${defaultOf(r.node)} | ${meaning(r.node, r.required)} |`)
  return out.join('\n')
}

/** Keys marked required by their parent object (by dotted row key). */
function requiredKeys(root: ObjectNode): Set<string> {
  const set = new Set<string>()
  for (const r of [{key: '', node: root as SchemaNode}, ...schemaRows(root)]) {
    const obj = r.node.kind === 'object' ? r.node : null
    // A field implied by the object's name is explained by its own doc, not marked required.
    if (obj?.required) for (const k of obj.required) if (obj.impliedByName?.field !== k) set.add(r.key ? `${r.key}.${k}` : k)
  }
  return set
}

/**
 * The key tables of docs/settings.md, generated from the schema: one table for the top-level
 * keys, then one per section, in schema order.
 */
export function renderSettingsTables(root: ObjectNode = SETTINGS_SCHEMA): string {
  const required = requiredKeys(root)
  const rows = schemaRows(root).map((r) => ({...r, required: required.has(r.key)}))
  const sections: string[] = []
  const top = Object.entries(root.fields).filter(([, n]) => n.kind !== 'object' && !(n.kind === 'map' && n.values.kind === 'object'))
  sections.push(`### Top-level keys\n\n${table(top.map(([k, node]) => ({key: k, node, required: required.has(k)})))}`)
  for (const [name, node] of Object.entries(root.fields)) {
    if (top.some(([k]) => k === name)) continue
    const inSection = rows.filter((r) => r.key.startsWith(name + '.'))
    sections.push(`### \`${name}\`\n\n${cell(node.doc)}\n\n${table(inSection)}`)
  }
  return [DOCS_BEGIN, '', sections.join('\n\n'), '', DOCS_END].join('\n')
}

/** Replaces the generated block of a Markdown text (between the markers) with the current tables. */
export function replaceGeneratedBlock(markdown: string): string {
  const start = markdown.indexOf(DOCS_BEGIN)
  const end = markdown.indexOf(DOCS_END)
  if (start < 0 || end < start) throw new Error('docs/settings.md has no generated block markers')
  return markdown.slice(0, start) + renderSettingsTables() + markdown.slice(end + DOCS_END.length)
}
