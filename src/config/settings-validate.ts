import {isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node} from 'yaml'
import {SETTINGS_SCHEMA} from './schema/settings-schema.js'
import {checkLeaf} from './schema/check-leaf.js'
import {expectedOf, type SchemaNode} from './schema/types.js'
import {pathKey, type Location, type SettingsIssue} from './settings-issues.js'
import {keyAt} from './yaml-file.js'
import {aliasLimitError, MAX_YAML_ALIASES, yamlToJS} from './yaml-aliases.js'
import {AppError} from '../api/app-error.js'

/** One settings file checked against the schema. */
export interface ValidatedFile {
  file: string
  /** False when the YAML could not be parsed (tree is then empty). */
  parsed: boolean
  /** The file's values: invalid values left out, unknown keys kept as they are. */
  tree: Record<string, unknown>
  issues: SettingsIssue[]
  /** Where each value (by dotted path) is written. */
  locations: Map<string, Location>
}

function describe(node: unknown): string {
  if (isMap(node)) return 'a mapping'
  if (isSeq(node)) return 'a list'
  if (isScalar(node)) {
    const v = node.value
    if (v === null || v === undefined) return 'nothing'
    if (typeof v === 'string') return `the string ${JSON.stringify(v)}`
    if (typeof v === 'number') return `the number ${String(v)}`
    if (typeof v === 'boolean') return `the boolean ${String(v)}`
  }
  return 'a value'
}

const isNull = (n: unknown) => n === null || n === undefined || (isScalar(n) && (n.value === null || n.value === undefined))

/**
 * Parses and checks one settings file. Never throws for content problems: syntax errors, wrong
 * types, values outside their allowed set and missing required keys are errors; unknown keys are
 * warnings and are kept in `tree`.
 */
export function validateSettingsText(file: string, text: string, schema: SchemaNode = SETTINGS_SCHEMA): ValidatedFile {
  const lines = new LineCounter()
  const doc = parseDocument(text, {lineCounter: lines, prettyErrors: false, uniqueKeys: true})
  const issues: SettingsIssue[] = []
  const locations = new Map<string, Location>()
  const first = doc.errors[0]
  if (first) {
    // With prettyErrors off the parser sets no linePos: compute it from the offset.
    const pos = lines.linePos(first.pos[0])
    issues.push({severity: 'error', file, line: pos.line, column: pos.col, key: keyAt(doc, first.pos[0]) ?? '', message: first.message.split('\n')[0]})
    return {file, parsed: false, tree: {}, issues, locations}
  }
  const at = (node: Node | null | undefined, fallback: Node | null | undefined) => {
    const r = (node?.range ?? fallback?.range) as [number, number, number] | undefined
    const p = r ? lines.linePos(r[0]) : {line: 1, col: 1}
    return {line: p.line, column: p.col}
  }
  const problem = (severity: SettingsIssue['severity'], path: string[], node: Node | null | undefined, parent: Node | null | undefined, message: string) =>
    issues.push({severity, file, ...at(node, parent), key: pathKey(path), message})
  // Aliases are followed by the walk below, so their count is bounded here as in yamlToJS: a
  // nested alias bomb under a known key would otherwise be walked exponentially.
  let aliasesFollowed = 0
  const resolve = (n: unknown): Node | null => {
    if (!isAlias(n)) return n as Node | null
    if (++aliasesFollowed > MAX_YAML_ALIASES) throw aliasLimitError()
    return (n.resolve(doc as Document) as Node | undefined) ?? null
  }

  const check = (raw: unknown, s: SchemaNode, path: string[], parent: Node | null): unknown => {
    const node = resolve(raw)
    if (isNull(node)) return undefined
    locations.set(pathKey(path), {file, ...at(node, parent)})
    const wrong = () => {
      problem('error', path, node, parent, `expected ${expectedOf(s)}, found ${describe(node)}`)
      return undefined
    }
    switch (s.kind) {
      case 'any':
        return yamlToJS(node as Node, doc as Document)
      case 'object': {
        if (!isMap(node)) return wrong()
        const out: Record<string, unknown> = {}
        for (const pair of node.items) {
          const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key)
          const child = s.fields[key]
          if (!child) {
            if (!s.open) problem('warning', [...path, key], pair.key as Node, node, 'unknown key (kept as it is)')
            const v = resolve(pair.value)
            if (v && !isNull(v)) locations.set(pathKey([...path, key]), {file, ...at(v, node)})
            out[key] = v ? yamlToJS(v, doc as Document) : null
            continue
          }
          const v = check(pair.value, child, [...path, key], node)
          if (v !== undefined) out[key] = v
        }
        for (const req of s.required ?? []) {
          if (s.impliedByName?.field === req && s.impliedByName.names.includes(path[path.length - 1] ?? '')) continue
          if (out[req] === undefined && !node.items.some((p) => isScalar(p.key) && p.key.value === req && !isNull(resolve(p.value)))) {
            problem('error', [...path, req], node, parent, `expected ${expectedOf(s.fields[req])}, found nothing (the key is required)`)
          }
        }
        const broken = s.check?.(out) ?? []
        for (const b of broken) problem('error', [...path, b.key], node, parent, b.message)
        return broken.length ? undefined : out
      }
      case 'map': {
        if (!isMap(node)) return wrong()
        const out: Record<string, unknown> = {}
        for (const pair of node.items) {
          const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key)
          const v = check(pair.value, s.values, [...path, key], node)
          if (v !== undefined) out[key] = v
        }
        return out
      }
      case 'list': {
        if (isScalar(node) && typeof node.value === 'string' && s.acceptCsv) return node.value.split(',').map((x) => x.trim()).filter(Boolean)
        if (!isSeq(node)) return wrong()
        const out: unknown[] = []
        node.items.forEach((item, i) => {
          const v = check(item, s.items, [...path, String(i)], node)
          if (v !== undefined) out.push(v)
        })
        return out
      }
      default:
        if (!isScalar(node)) return wrong()
        return checkLeaf(node.value, (node as {source?: string}).source, s, () => wrong(), (msg) => {
          problem('error', path, node, parent, msg)
          return undefined
        })
    }
  }

  let tree: Record<string, unknown>
  try {
    tree = (check(doc.contents, schema, [], null) as Record<string, unknown> | undefined) ?? {}
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'yaml_alias_limit') throw err
    return {file, parsed: false, tree: {}, issues: [{severity: 'error', file, line: 1, column: 1, key: '', message: err.message}], locations}
  }
  if (isNull(doc.contents) && schema === SETTINGS_SCHEMA) {
    issues.push({severity: 'error', file, line: 1, column: 1, key: 'schema_version', message: 'expected one of "1", found nothing (the key is required)'})
  }
  const sv: unknown = isMap(doc.contents) ? doc.contents.get('schema_version', true) : undefined
  if (isScalar(sv) && sv.value === 1) {
    issues.push({severity: 'warning', file, ...at(sv as Node, null), key: 'schema_version', message: 'expected the string "1", found the number 1 (write schema_version: "1")'})
  }
  issues.sort((a, b) => a.line - b.line || a.column - b.column)
  return {file, parsed: true, tree, issues, locations}
}
