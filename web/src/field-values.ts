import type {LayoutField} from '../../src/api/settings-layout.js'

/** The text a field's input shows for a value. */
export function display(field: LayoutField, value: unknown): string {
  if (value === undefined || value === null) return ''
  if (field.kind === 'json') return JSON.stringify(value, null, 2)
  return String(value)
}

/**
 * Parses what the user typed back into a settings value; throws with a message when it is not
 * one (a number field holding text, a JSON field holding invalid JSON). Empty clears (null).
 */
export function parse(field: LayoutField, text: string | boolean): unknown {
  if (field.kind === 'bool') return text === true
  const t = String(text)
  if (t.trim() === '') return null
  if (field.kind === 'int' || field.kind === 'float') {
    const n = Number(t)
    if (!Number.isFinite(n) || (field.kind === 'int' && !Number.isInteger(n))) throw new Error(`enter ${field.kind === 'int' ? 'a whole number' : 'a number'}`)
    return n
  }
  if (field.kind === 'json') {
    try {
      return JSON.parse(t)
    } catch {
      throw new Error('enter valid JSON')
    }
  }
  return t
}
