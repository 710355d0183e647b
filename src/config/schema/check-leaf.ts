import {expectedOf, type LeafNode} from './types.js'

/**
 * Checks a scalar against a leaf node; returns the typed value or calls `wrong` (type mismatch)
 * or `bad` (right type, value not allowed). Numbers are accepted for strings (`cpu: 0.5`).
 */
export function checkLeaf<T>(value: unknown, source: string | undefined, s: LeafNode, wrong: () => T, bad: (message: string) => T): unknown {
  switch (s.kind) {
    case 'string': {
      if (typeof value !== 'string' && typeof value !== 'number') return wrong()
      const v = typeof value === 'number' ? (source ?? String(value)) : value
      if (s.oneOf && !s.oneOf.includes(v)) return bad(`expected ${expectedOf(s)}, found ${JSON.stringify(v)}`)
      if (s.format && !s.format.re.test(v)) return bad(`expected ${s.format.describe}, found ${JSON.stringify(v)}`)
      return v
    }
    case 'int':
      if (typeof value !== 'number' || !Number.isInteger(value)) return wrong()
      if (s.min !== undefined && value < s.min) return bad(`expected ${expectedOf(s)}, found ${value}`)
      return value
    case 'float':
      if (typeof value !== 'number') return wrong()
      if ((s.min !== undefined && value < s.min) || (s.max !== undefined && value > s.max)) return bad(`expected ${expectedOf(s)}, found ${value}`)
      return value
    case 'bool':
      return typeof value === 'boolean' ? value : wrong()
    case 'scalar':
      return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : wrong()
    default:
      return value
  }
}
