import {isDeepStrictEqual} from 'node:util'
import {isAlias, isCollection, isMap, isScalar, isSeq, parseDocument, Scalar, stringify, visit, type Document, type Node, type Pair, type YAMLMap} from 'yaml'
import {AppError} from '../api/app-error.js'
import {yamlToJS} from './yaml-aliases.js'

/** One edit: set `path` to `value`, or remove it (and its whole block) when `value` is null. */
export interface SettingsEdit {
  path: string[]
  value: unknown | null
}
type Tree = Record<string, unknown>
const isObj = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Applies edits to the text of a settings file and returns the new text. Only the bytes of the
 * edited keys change: comments, blank lines, key order, quoting and unknown keys elsewhere stay
 * byte-identical. Values are written as sent (explicit empty strings, lists and mappings too);
 * null removes a key or block; a missing parent is created. Each edit is checked by parsing the
 * result and comparing it with the expected data, so a bug can never write a wrong file.
 *
 * Throws AppError: `config_invalid` (the text is not valid YAML), `yaml_alias_on_edited_path`
 * (an anchor, alias or merge key on the path or inside the replaced value), `invalid_request`
 * (a path through a list or a scalar).
 */
export function editSettingsText(text: string, edits: readonly SettingsEdit[]): string {
  for (const edit of edits) text = applyEdit(text, edit)
  return text
}

function parse(text: string): Document {
  const doc = parseDocument(text, {uniqueKeys: true, prettyErrors: false})
  if (doc.errors.length) throw new AppError('config_invalid', `the settings file is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`)
  return doc
}

const dataOf = (doc: Document): unknown => {
  const v = yamlToJS(doc)
  return v === null || v === undefined ? {} : v
}

/** The data an edit should produce, computed on plain values. */
function expectedData(before: unknown, edit: SettingsEdit): unknown {
  const root: Tree = isObj(before) ? structuredClone(before) : {}
  let cur = root
  for (const seg of edit.path.slice(0, -1)) {
    if (!isObj(cur[seg])) {
      if (edit.value === null) return root
      cur[seg] = {}
    }
    cur = cur[seg] as Tree
  }
  const last = edit.path[edit.path.length - 1]
  if (edit.value === null) delete cur[last]
  else cur[last] = structuredClone(edit.value)
  return root
}

function applyEdit(text: string, edit: SettingsEdit): string {
  if (!edit.path.length || edit.path.some((s) => typeof s !== 'string' || s === '')) throw new AppError('invalid_request', `invalid key path ${JSON.stringify(edit.path)}`)
  if (edit.value === undefined) throw new AppError('invalid_request', `no value for ${edit.path.join('.')} (use null to remove a key)`)
  const doc = parse(text)
  const out = new Splicer(text, doc).apply(edit)
  const after = parse(out)
  if (!isDeepStrictEqual(dataOf(after), expectedData(dataOf(doc), edit))) {
    throw new AppError('internal_error', `editing ${edit.path.join('.')} would not give the expected settings; the file was left as it was`)
  }
  return out
}

const refused = (path: string[]) =>
  new AppError('yaml_alias_on_edited_path', `${path.join('.')}: the settings file uses a YAML anchor, alias or merge key on this path; edit the file by hand`, {key: path.join('.')})

function hasAliasInside(node: unknown): boolean {
  let found = false
  visit(node as Node, {
    Alias: () => {
      found = true
      return visit.BREAK
    },
    Node: (_k, n) => {
      if ((n as {anchor?: string}).anchor) {
        found = true
        return visit.BREAK
      }
    },
    Pair: (_k, p) => {
      if (isScalar(p.key) && p.key.value === '<<') {
        found = true
        return visit.BREAK
      }
    },
  })
  return found
}

/** Text splicing driven by the parsed document's node ranges. */
class Splicer {
  private readonly eol: string
  private readonly step: number

  constructor(
    private readonly text: string,
    private readonly doc: Document,
  ) {
    this.eol = text.includes('\r\n') ? '\r\n' : '\n'
    this.step = this.detectIndent()
  }

  apply(edit: SettingsEdit): string {
    const {path, value} = edit
    let node: unknown = this.doc.contents
    let parentPair: Pair | null = null
    for (let i = 0; i < path.length; i++) {
      const seg = path[i]
      const here = path.slice(0, i + 1)
      if (isAlias(node) || (node as {anchor?: string} | null)?.anchor) throw refused(here)
      if (node === null || node === undefined || (isScalar(node) && node.value === null)) {
        if (value === null) return this.text
        const nested = nest(path.slice(i), value)
        if (parentPair) return this.replaceValue(parentPair, nested)
        return this.appendRoot(nested)
      }
      if (!isMap(node)) {
        if (value === null) return this.text
        throw new AppError('invalid_request', `cannot set ${path.join('.')}: ${path.slice(0, i).join('.')} is ${isSeq(node) ? 'a list' : 'a value'}, not a mapping`)
      }
      const map = node as YAMLMap
      if (map.items.some((p) => isScalar(p.key) && p.key.value === '<<')) throw refused(here)
      if (map.flow) {
        if (hasAliasInside(map)) throw refused(here)
        return this.rewriteFlow(map, path.slice(i), value)
      }
      const pair = map.items.find((p) => isScalar(p.key) && String(p.key.value) === seg) as Pair<Scalar, unknown> | undefined
      if (!pair) {
        if (value === null) return this.text
        return this.insertPair(map, seg, nest(path.slice(i + 1), value))
      }
      if (i === path.length - 1) {
        if (pair.value !== null && hasAliasInside(pair.value)) throw refused(here)
        if (isAlias(pair.value)) throw refused(here)
        if (value === null) return this.deletePair(map, pair, parentPair)
        return this.replaceValue(pair, value)
      }
      parentPair = pair
      node = pair.value
    }
    return this.text
  }

  // ---- positions

  private lineStart(pos: number): number {
    return this.text.lastIndexOf('\n', pos - 1) + 1
  }

  private lineEndAfter(pos: number): number {
    if (pos > 0 && this.text[pos - 1] === '\n') return pos
    const i = this.text.indexOf('\n', pos)
    return i < 0 ? this.text.length : i + 1
  }

  private column(pos: number): number {
    return pos - this.lineStart(pos)
  }

  /** End of a node's own content (never its trailing comments). */
  private contentEnd(node: unknown): number {
    if (isCollection(node) && !node.flow && node.items.length) {
      const last = node.items[node.items.length - 1]
      if (isMap(node)) {
        const p = last as Pair
        return p.value !== null && p.value !== undefined && (p.value as Node).range ? this.contentEnd(p.value) : (p.key as Node).range![1]
      }
      return this.contentEnd(last)
    }
    return (node as Node).range![1]
  }

  /** From the start of the key's line to the end of the line where the value ends. */
  private extent(pair: Pair): [number, number] {
    const key = pair.key as Node
    const end = pair.value !== null && pair.value !== undefined && (pair.value as Node).range ? this.contentEnd(pair.value) : key.range![1]
    return [this.lineStart(key.range![0]), this.lineEndAfter(Math.max(end, key.range![1]))]
  }

  private colon(pair: Pair): number {
    const key = pair.key as Node
    let i = key.range![1]
    while (i < this.text.length && (this.text[i] === ' ' || this.text[i] === '\t')) i++
    if (this.text[i] !== ':') throw new AppError('invalid_request', `cannot edit ${String((pair.key as Scalar).value)}: unsupported key syntax`)
    return i
  }

  /** The comment at the end of a line (`# ...`), without the line break. */
  private trailingComment(from: number): string | null {
    const end = this.lineEndAfter(from)
    const rest = this.text.slice(from, end).replace(/\r?\n$/, '')
    const m = /^\s*(#.*)$/.exec(rest)
    return m ? m[1] : null
  }

  private splice(start: number, end: number, insert: string): string {
    return this.text.slice(0, start) + insert + this.text.slice(end)
  }

  private detectIndent(): number {
    const root = this.doc.contents
    if (isMap(root) && !root.flow) {
      for (const p of root.items) {
        if (isMap(p.value) && !p.value.flow && p.value.items.length) {
          const d = this.column((p.value.items[0].key as Node).range![0]) - this.column((p.key as Node).range![0])
          if (d > 0) return d
        }
      }
    }
    return 2
  }

  // ---- rendering

  private scalar(value: unknown, old?: unknown): string {
    let type: Scalar.Type = 'PLAIN'
    if (typeof value === 'string' && isScalar(old) && (old.type === 'QUOTE_DOUBLE' || old.type === 'QUOTE_SINGLE')) type = old.type
    if (typeof value === 'string' && /[\n\r]/.test(value)) type = 'QUOTE_DOUBLE'
    const s = stringify(value, {defaultStringType: type, defaultKeyType: 'PLAIN', lineWidth: 0, minContentWidth: 0}).replace(/\n$/, '')
    return s.includes('\n') ? JSON.stringify(value) : s
  }

  private isInline(value: unknown): boolean {
    return !isObj(value) && !Array.isArray(value) ? true : (Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0)
  }

  /** A block rendering of `{key: value}` (or of a collection) indented to `indent` columns. */
  private block(value: unknown, indent: number): string {
    const s = stringify(value, {indent: this.step, lineWidth: 0, minContentWidth: 0, defaultKeyType: 'PLAIN'}).replace(/\n$/, '')
    const pad = ' '.repeat(indent)
    return s.split('\n').map((l) => (l ? pad + l : l)).join(this.eol) + this.eol
  }

  /** A one-line flow rendering (`{a: 1, b: [x, y]}`); strings that are not plainly safe are double-quoted. */
  private flow(value: unknown): string {
    if (Array.isArray(value)) return `[${value.map((v) => this.flow(v)).join(', ')}]`
    if (isObj(value)) return `{${Object.entries(value).map(([k, v]) => `${this.flowString(k)}: ${this.flow(v)}`).join(', ')}}`
    if (typeof value === 'string') return this.flowString(value)
    return this.scalar(value)
  }

  private flowString(s: string): string {
    if (/^[A-Za-z_./][A-Za-z0-9_./@ -]*$/.test(s) && !s.endsWith(' ')) {
      const d = parseDocument(s)
      if (!d.errors.length && isScalar(d.contents) && d.contents.value === s) return s
    }
    return JSON.stringify(s)
  }

  // ---- edits

  private replaceValue(pair: Pair, value: unknown): string {
    const colon = this.colon(pair)
    const old = pair.value as Node | null
    const oldRange = old?.range
    const oldIsInline = !!old && !!oldRange && oldRange[0] < oldRange[1] && (isScalar(old) ? !String(old.type).startsWith('BLOCK') : isCollection(old) && old.flow)
    const [, end] = this.extent(pair)
    if (this.isInline(value) || (oldIsInline && isCollection(old) && (old.items.length > 0))) {
      const rendered = this.isInline(value) ? this.scalar(value, old) : this.flow(value)
      if (oldIsInline) return this.splice(oldRange![0], oldRange![1], rendered)
      const comment = this.trailingComment(colon + 1)
      return this.splice(colon + 1, end, ` ${rendered}${comment ? ` ${comment}` : ''}${this.eol}`)
    }
    const comment = oldIsInline ? this.trailingComment(oldRange![1]) : this.trailingComment(colon + 1)
    const indent = this.column((pair.key as Node).range![0]) + this.step
    const body = this.block(value, indent)
    return this.splice(colon + 1, end, `${comment ? ` ${comment}` : ''}${this.eol}${body}`)
  }

  private insertPair(map: YAMLMap, key: string, value: unknown): string {
    const last = map.items[map.items.length - 1] as Pair
    const indent = this.column((map.items[0].key as Node).range![0])
    // After the last pair's own comments (indented under it): they stay with that block, or a
    // later removal of the new key would take them along.
    const at = this.ownCommentsEnd(this.extent(last)[1], indent)
    const pre = at > 0 && this.text[at - 1] !== '\n' ? this.eol : ''
    return this.splice(at, at, pre + this.block({[key]: value}, indent))
  }

  private appendRoot(value: unknown): string {
    const t = this.text
    const pre = t.length && !t.endsWith('\n') ? this.eol : ''
    return t + pre + this.block(value, 0)
  }

  /**
   * Past `end`: comment lines indented deeper than `column` (with blank lines between them).
   * They belong to the block being removed, so they go with it rather than float loose.
   */
  private ownCommentsEnd(end: number, column: number): number {
    let at = end
    let cursor = end
    while (cursor < this.text.length) {
      const nl = this.text.indexOf('\n', cursor)
      const lineEnd = nl < 0 ? this.text.length : nl + 1
      const line = this.text.slice(cursor, lineEnd).replace(/\r?\n$/, '')
      cursor = lineEnd
      if (line.trim() === '') continue
      const m = /^(\s*)#/.exec(line)
      if (!m || m[1].length <= column) break
      at = lineEnd
    }
    return at
  }

  private deletePair(map: YAMLMap, pair: Pair, parentPair: Pair | null): string {
    const [start, contentEnd] = this.extent(pair)
    const end = this.ownCommentsEnd(contentEnd, this.column((pair.key as Node).range![0]))
    if (map.items.length > 1 || !parentPair) return this.splice(start, end, '')
    // The last key of a block: the block stays, as an empty mapping.
    const colon = this.colon(parentPair)
    const removed = this.splice(start, end, '')
    return removed.slice(0, colon + 1) + ' {}' + removed.slice(colon + 1)
  }

  private rewriteFlow(map: YAMLMap, rest: string[], value: unknown): string {
    const before = yamlToJS(map, this.doc)
    const data = expectedData(before, {path: rest, value})
    if (isDeepStrictEqual(before, data)) return this.text
    const r = map.range!
    return this.splice(r[0], r[1], this.flow(data))
  }
}

/** `['a', 'b']`, v -> `{a: {b: v}}`; an empty path gives v itself. */
function nest(path: string[], value: unknown): unknown {
  return path.reduceRight<unknown>((acc, seg) => ({[seg]: acc}), value)
}
