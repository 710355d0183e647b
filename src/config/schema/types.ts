/**
 * Node types of the settings schema. One tree (settings-schema.ts) describes every key of
 * settings.yaml; validation, defaults, environment overrides, `svc config` value parsing, the
 * CLI's help and the key tables of docs/settings.md are all derived from it.
 */
export type LeafKind = 'string' | 'int' | 'float' | 'bool' | 'scalar' | 'any'

interface Base {
  doc: string
  /** The `SVC_*` variable that overrides this key (settings-file overrides of the spec). */
  env?: string
}

export interface LeafNode extends Base {
  kind: LeafKind
  default?: unknown
  /** Allowed values of a string (case-sensitive). */
  oneOf?: readonly string[]
  min?: number
  max?: number
  /** A format a string must have, with the words used in messages ("a duration such as 45m"). */
  format?: {re: RegExp; describe: string}
}

export interface ObjectNode extends Base {
  kind: 'object'
  fields: Record<string, SchemaNode>
  required?: readonly string[]
  /**
   * A required field that may be left out when the object's own name (its key in a map) is one
   * of `names`: the name is then its value (`harness` of a config named after a built-in harness).
   */
  impliedByName?: {field: string; names: readonly string[]}
  /** Keys outside `fields` are expected (no unknown-key warning). */
  open?: boolean
  /** Materialise the defaults of this object's fields when the object is absent (default true). */
  materialize?: boolean
  /**
   * A rule across fields, run on the object's valid fields: each problem (`key` relative to the
   * object) is an error, and the object is left out like any invalid value.
   */
  check?: (value: Record<string, unknown>) => Array<{key: string; message: string}>
}

export interface MapNode extends Base {
  kind: 'map'
  /** What a key of the map names, for docs (`<name>`). */
  keyName: string
  values: SchemaNode
}

export interface ListNode extends Base {
  kind: 'list'
  items: SchemaNode
  default?: unknown[]
  /** A comma-separated string is accepted for a list of strings (server keys, as bootstrap does). */
  acceptCsv?: boolean
}

export type SchemaNode = LeafNode | ObjectNode | MapNode | ListNode

export const DURATION = {re: /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/, describe: 'a duration such as 30s, 45m or 2h'}

export const str = (doc: string, extra: Partial<LeafNode> = {}): LeafNode => ({kind: 'string', doc, ...extra})
export const int = (doc: string, extra: Partial<LeafNode> = {}): LeafNode => ({kind: 'int', doc, ...extra})
export const float = (doc: string, extra: Partial<LeafNode> = {}): LeafNode => ({kind: 'float', doc, ...extra})
export const bool = (doc: string, extra: Partial<LeafNode> = {}): LeafNode => ({kind: 'bool', doc, ...extra})
export const any = (doc: string): LeafNode => ({kind: 'any', doc})
export const obj = (doc: string, fields: Record<string, SchemaNode>, extra: Partial<ObjectNode> = {}): ObjectNode => ({kind: 'object', doc, fields, ...extra})
export const map = (doc: string, keyName: string, values: SchemaNode): MapNode => ({kind: 'map', doc, keyName, values})
export const list = (doc: string, items: SchemaNode, extra: Partial<ListNode> = {}): ListNode => ({kind: 'list', doc, items, ...extra})

/** "a whole number", "true or false", ...: what a node expects, in the words of error messages. */
export function expectedOf(node: SchemaNode): string {
  switch (node.kind) {
    case 'string':
      if (node.oneOf) return `one of ${node.oneOf.map((v) => JSON.stringify(v)).join(', ')}`
      return node.format ? node.format.describe : 'a string'
    case 'int':
      return node.min !== undefined ? `a whole number of at least ${node.min}` : 'a whole number'
    case 'float':
      return node.min !== undefined && node.max !== undefined ? `a number from ${node.min} to ${node.max}` : 'a number'
    case 'bool':
      return 'true or false'
    case 'scalar':
      return 'a string, number or boolean'
    case 'any':
      return 'any value'
    case 'list':
      return 'a list'
    default:
      return 'a mapping'
  }
}

/** Short type name for tables: string, int, bool, list of string, map of runtime, ... */
export function typeName(node: SchemaNode): string {
  switch (node.kind) {
    case 'list':
      return node.items.kind === 'object' ? 'list of objects' : `list of ${typeName(node.items)}`
    case 'map':
      return node.values.kind === 'object' ? 'map of objects' : `map of ${typeName(node.values)}`
    case 'object':
      return 'object'
    case 'scalar':
      return 'string'
    default:
      return node.kind
  }
}
