import {AppError} from '../api/app-error.js'
import {checkLeaf} from './schema/check-leaf.js'
import {expectedOf, type SchemaNode} from './schema/types.js'
import {nodeAt} from './schema/walk.js'

/**
 * `hub.endpoint` -> `['hub', 'endpoint']`. A segment holding dots is double-quoted:
 * `telemetry.filter.sampling.rates."agent.tool"`. Refuses empty segments.
 */
export function keyPath(key: string): string[] {
  const path: string[] = []
  let i = 0
  const bad = () => new AppError('usage_error', `not a settings key: ${JSON.stringify(key)} (write it dotted, like hub.endpoint; quote a part holding dots: rates."agent.tool")`)
  while (i <= key.length) {
    let seg = ''
    if (key[i] === '"') {
      const end = key.indexOf('"', i + 1)
      if (end < 0) throw bad()
      seg = key.slice(i + 1, end)
      i = end + 1
      if (i < key.length && key[i] !== '.') throw bad()
    } else {
      const end = key.indexOf('.', i)
      seg = key.slice(i, end < 0 ? key.length : end)
      i = end < 0 ? key.length : end
    }
    if (seg === '') throw bad()
    path.push(seg)
    if (i >= key.length) break
    i++ // the dot
    if (i >= key.length) throw bad()
  }
  return path
}

const TRUE = /^(true|yes|on|1)$/i
const FALSE = /^(false|no|off|0)$/i

function parseScalar(key: string, node: SchemaNode, raw: string): unknown {
  const bad = (found: string) => new AppError('usage_error', `${key}: expected ${expectedOf(node)}, found ${found}`)
  let value: unknown = raw
  switch (node.kind) {
    case 'bool':
      if (TRUE.test(raw)) return true
      if (FALSE.test(raw)) return false
      throw bad(JSON.stringify(raw))
    case 'int':
      if (!/^-?\d+$/.test(raw.trim())) throw bad(JSON.stringify(raw))
      value = Number(raw.trim())
      break
    case 'float':
      if (raw.trim() === '' || !Number.isFinite(Number(raw))) throw bad(JSON.stringify(raw))
      value = Number(raw)
      break
    case 'any':
      try {
        return JSON.parse(raw)
      } catch {
        return raw
      }
    default:
      break
  }
  if (node.kind === 'object' || node.kind === 'map' || node.kind === 'list') return value
  return checkLeaf(value, raw, node, () => {
    throw bad(JSON.stringify(raw))
  }, (message) => {
    throw new AppError('usage_error', `${key}: ${message}`)
  })
}

/**
 * Parses a command-line value by the key's schema type: booleans (true/false, yes/no, on/off,
 * 1/0), whole numbers, numbers, strings; a list as JSON (`["a","b"]`) or comma-separated; a
 * mapping as a JSON object. Unknown keys are refused: a typo never lands in a settings file.
 */
export function parseSettingValue(path: string[], raw: string): unknown {
  const key = path.join('.')
  const node = nodeAt(path)
  if (!node) throw new AppError('usage_error', `unknown setting "${key}": see \`svc config list\` and docs/settings.md for the keys`)
  if (node.kind === 'list') {
    let items: unknown[]
    if (raw.trim().startsWith('[')) {
      try {
        items = JSON.parse(raw)
      } catch {
        throw new AppError('usage_error', `${key}: expected a list (JSON like ["a","b"] or comma-separated), found ${JSON.stringify(raw)}`)
      }
      if (!Array.isArray(items)) throw new AppError('usage_error', `${key}: expected a list, found ${JSON.stringify(raw)}`)
      if (node.items.kind === 'string' || node.items.kind === 'scalar') items = items.map((v) => (typeof v === 'number' ? String(v) : v))
    } else {
      items = raw.split(',').map((s) => s.trim()).filter(Boolean)
    }
    if (node.items.kind !== 'object' && node.items.kind !== 'map' && node.items.kind !== 'list' && node.items.kind !== 'any') {
      items = items.map((v, i) => (typeof v === 'string' ? parseScalar(`${key}[${i}]`, node.items, v) : v))
    }
    return items
  }
  if (node.kind === 'object' || node.kind === 'map') {
    let v: unknown
    try {
      v = JSON.parse(raw)
    } catch {
      v = undefined
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new AppError('usage_error', `${key}: expected a mapping as a JSON object (like {"A":"1"}), found ${JSON.stringify(raw)}`)
    return v
  }
  return parseScalar(key, node, raw)
}
