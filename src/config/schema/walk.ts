import {SETTINGS_SCHEMA} from './settings-schema.js'
import {any, type LeafNode, type SchemaNode} from './types.js'

const OPEN_VALUE = any('A key of an open block.')

/**
 * The schema node of a key path (`['runtimes', 'docker', 'env', 'PATH']`); map keys match any
 * name. Undefined when the schema has no such key (an unknown key); keys under an open block or
 * an `any` value are `any`.
 */
export function nodeAt(path: readonly string[], root: SchemaNode = SETTINGS_SCHEMA): SchemaNode | undefined {
  let cur: SchemaNode | undefined = root
  for (const seg of path) {
    if (!cur) return undefined
    if (cur.kind === 'object') cur = cur.fields[seg] ?? (cur.open ? OPEN_VALUE : undefined)
    else if (cur.kind === 'map') cur = cur.values
    else if (cur.kind === 'any') cur = OPEN_VALUE
    else return undefined
  }
  return cur
}

export interface SchemaRow {
  /** Dotted key with `<name>` for map keys and `[]` for list entries. */
  key: string
  node: SchemaNode
}

/**
 * Every documented key, depth first in schema order. Leaves, lists of scalars and maps of
 * scalars are rows; objects, maps of objects and lists of objects are rows too, followed by
 * their fields.
 */
export function schemaRows(root: SchemaNode = SETTINGS_SCHEMA, prefix = ''): SchemaRow[] {
  const rows: SchemaRow[] = []
  const visit = (node: SchemaNode, key: string) => {
    if (key) rows.push({key, node})
    if (node.kind === 'object') for (const [k, child] of Object.entries(node.fields)) visit(child, key ? `${key}.${k}` : k)
    else if (node.kind === 'map' && node.values.kind === 'object') visit(node.values, `${key}.<${node.keyName}>`)
    else if (node.kind === 'list' && node.items.kind === 'object') visit(node.items, `${key}[]`)
  }
  visit(root, prefix)
  return rows
}

export interface EnvOverride {
  variable: string
  path: string[]
  node: LeafNode
}

/** The `SVC_*` variables that override settings-file keys, in schema order. */
export function envOverrides(root: SchemaNode = SETTINGS_SCHEMA): EnvOverride[] {
  const out: EnvOverride[] = []
  const visit = (node: SchemaNode, path: string[]) => {
    if (node.kind === 'object') for (const [k, child] of Object.entries(node.fields)) visit(child, [...path, k])
    else if (node.kind !== 'map' && node.kind !== 'list' && node.env) out.push({variable: node.env, path, node})
  }
  visit(root, [])
  return out
}

/** True when a node and all its descendants are leaves with no fixed fields (env maps, any). */
export function isLeafLike(node: SchemaNode): boolean {
  return node.kind !== 'object' && !(node.kind === 'map' && node.values.kind === 'object')
}
