import {KEY_CLASS_RULES} from '../../config/key-classes.js'
import {classOf, READ_ONLY_KEYS, WORKSTATION_FORCED, HUB_OWNED_KEYS} from '../../domain/settings/keys.js'
import {schemaRows} from '../../config/schema/walk.js'
import type {SchemaNode} from '../../config/schema/types.js'
import type {LayoutField} from '../../api/settings-layout.js'

const DATABASE_ONLY_KINDS: Record<string, LayoutField['kind']> = {'profiling.readiness_marks': 'bool'}

const kindOf = (node: SchemaNode): LayoutField['kind'] =>
  node.kind === 'list' || node.kind === 'map' || node.kind === 'object' ? 'json' : node.kind === 'string' || node.kind === 'int' || node.kind === 'float' || node.kind === 'bool' ? node.kind : 'json'

/**
 * The settings page's form: every key the schema documents that is stored and compared whole
 * (a unit: a leaf, a list, a map, a top-level `default_*` block), with its layer and section.
 */
export function settingsLayout(mode: string): LayoutField[] {
  const out: LayoutField[] = []
  const taken: string[] = []
  for (const {key, node} of schemaRows()) {
    if (key.includes('<') || key.includes('[]')) continue
    // A unit's children are edited as part of it.
    if (taken.some((t) => key.startsWith(`${t}.`))) continue
    const top = !key.includes('.')
    const cls = classOf(key)
    // Open blocks of a Layer-1 section (federation, github_app) are edited whole, as JSON.
    const wholeBlock = node.kind === 'object' && ((top && key.startsWith('default_')) || (node.open === true && cls?.layer === 1))
    if (node.kind === 'object' && !wholeBlock) continue
    if (!cls) continue
    taken.push(key)
    const forced = mode === 'workstation' && WORKSTATION_FORCED.has(key)
    const leaf = node.kind !== 'object' && node.kind !== 'map' && node.kind !== 'list' ? node : null
    out.push({
      key,
      layer: cls.layer,
      section: cls.layer === 1 ? cls.section : null,
      kind: kindOf(node),
      doc: node.doc ?? '',
      readOnly: READ_ONLY_KEYS.has(key) || HUB_OWNED_KEYS.has(key) || forced,
      ...(leaf && 'oneOf' in leaf && Array.isArray(leaf.oneOf) && {options: leaf.oneOf.map(String)}),
    })
  }
  // Database-only keys have no schema node (they are never in a settings file).
  for (const {pattern, cls} of KEY_CLASS_RULES) {
    if (cls.layer !== 1 || pattern.includes('*') || taken.includes(pattern)) continue
    out.push({key: pattern, layer: 1, section: cls.section, kind: DATABASE_ONLY_KINDS[pattern] ?? 'json', doc: '', readOnly: false})
  }
  return out
}
