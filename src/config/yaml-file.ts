import {readFileSync} from 'node:fs'
import {isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node} from 'yaml'
import type {KeySpec} from './schema.js'
import {yamlToJS} from './yaml-aliases.js'
import {AppError} from '../api/app-error.js'

/** A settings file that cannot be used; the message names file, line, column and key. */
export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly column: number,
    readonly key: string | null,
    readonly problem: string,
  ) {
    super(`${file}:${line}:${column}: ${key ? `${key}: ` : ''}${problem}`)
    this.name = 'ConfigError'
  }
}

export interface LoadedYaml {
  file: string
  doc: Document
  data: Record<string, unknown>
  lines: LineCounter
}

/** Reads a YAML settings file; returns null when it does not exist. Throws ConfigError. */
export function loadYamlFile(file: string): LoadedYaml | null {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw new ConfigError(file, 1, 1, null, `cannot read file: ${(err as Error).message}`)
  }
  return parseYamlText(file, text)
}

export function parseYamlText(file: string, text: string): LoadedYaml {
  const lines = new LineCounter()
  const doc = parseDocument(text, {lineCounter: lines, prettyErrors: false, uniqueKeys: true})
  const first = doc.errors[0]
  if (first) {
    // With prettyErrors off the parser sets no linePos: compute it from the offset.
    const pos = lines.linePos(first.pos[0])
    throw new ConfigError(file, pos.line, pos.col, keyAt(doc, first.pos[0]), first.message.split('\n')[0])
  }
  let data: unknown
  try {
    data = yamlToJS(doc) ?? {}
  } catch (err) {
    if (err instanceof AppError) throw new ConfigError(file, 1, 1, null, err.message)
    throw err
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new ConfigError(file, 1, 1, null, 'expected a mapping of settings at the top level')
  }
  return {file, doc, data: data as Record<string, unknown>, lines}
}

/**
 * Dotted path of the last key that starts at or before `offset` in the (partly parsed)
 * document: the key a syntax error sits in or after. Null when there is none.
 */
export function keyAt(doc: Document, offset: number): string | null {
  let best: {path: string[]; start: number} | null = null
  const walk = (node: unknown, path: string[]) => {
    if (!isMap(node)) return
    for (const pair of node.items) {
      const key = pair.key as Node | null
      const start = key && isScalar(key) && key.range ? key.range[0] : null
      if (start === null || start > offset) continue
      const here = [...path, String(key!.toJSON())]
      if (!best || start >= best.start) best = {path: here, start}
      walk(pair.value, here)
    }
  }
  walk(doc.contents, [])
  return best ? (best as {path: string[]}).path.join('.') : null
}

/** Line and column of the value at `path` (or of its closest existing parent). */
export function positionOf(loaded: LoadedYaml, path: string[]): {line: number; column: number} {
  for (let n = path.length; n >= 0; n--) {
    const node = loaded.doc.getIn(path.slice(0, n), true) as Node | undefined
    if (node && node.range) {
      const pos = loaded.lines.linePos(node.range[0])
      return {line: pos.line, column: pos.col}
    }
  }
  return {line: 1, column: 1}
}

function describe(node: unknown): string {
  if (isMap(node)) return 'a mapping'
  if (isSeq(node)) return 'a list'
  if (isScalar(node)) {
    const v = node.value
    if (v === null) return 'an empty value'
    if (typeof v === 'string') return `the string "${v}"`
    return `${typeof v === 'number' ? 'the number' : typeof v === 'boolean' ? 'the boolean' : 'the value'} ${String(v)}`
  }
  return 'a value'
}

const expected: Record<KeySpec['type'], string> = {
  string: 'a string',
  int: 'a whole number',
  bool: 'true or false',
  list: 'a list',
  map: 'a mapping',
}

/**
 * Checks the known keys of a loaded file against their specs. Returns the first problem as a
 * ConfigError (start-up stops on it) or null. A null value counts as absent.
 */
export function checkTypes(loaded: LoadedYaml, specs: Record<string, KeySpec>): ConfigError | null {
  for (const [key, spec] of Object.entries(specs)) {
    const path = key.split('.')
    // A scalar where a parent mapping is expected is reported on the parent.
    for (let n = 1; n < path.length; n++) {
      const parent = loaded.doc.getIn(path.slice(0, n), true)
      if (parent === undefined || parent === null) break
      if (!isMap(parent) && !(isScalar(parent) && parent.value === null)) {
        const pos = positionOf(loaded, path.slice(0, n))
        return new ConfigError(loaded.file, pos.line, pos.column, path.slice(0, n).join('.'), `expected a mapping, found ${describe(parent)}`)
      }
    }
    const node = loaded.doc.getIn(path, true)
    if (node === undefined || (isScalar(node) && node.value === null)) continue
    const ok =
      spec.type === 'map' ? isMap(node)
      : spec.type === 'list' ? isSeq(node) || (isScalar(node) && typeof node.value === 'string')
      : isScalar(node) &&
        (spec.type === 'string' ? typeof node.value === 'string' || typeof node.value === 'number'
        : spec.type === 'int' ? Number.isInteger(node.value)
        : typeof node.value === 'boolean')
    if (!ok) {
      const pos = positionOf(loaded, path)
      return new ConfigError(loaded.file, pos.line, pos.column, key, `expected ${expected[spec.type]}, found ${describe(node)}`)
    }
    if (spec.oneOf && isScalar(node) && !spec.oneOf.includes(String(node.value))) {
      const pos = positionOf(loaded, path)
      return new ConfigError(loaded.file, pos.line, pos.column, key, `expected one of ${spec.oneOf.join(', ')}, found "${String(node.value)}"`)
    }
  }
  return null
}
