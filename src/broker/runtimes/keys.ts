/**
 * Named keys an agent's terminal accepts (`svc agent keys <agent> --key Enter`). Anything else is
 * sent as a literal string. The list is an allow-list: a named key goes to `tmux send-keys` as a
 * key name, so an unchecked string there could be any tmux key binding name.
 */
const BASE_KEYS = [
  'Enter', 'Escape', 'Tab', 'BTab', 'Space', 'BSpace', 'Delete', 'Insert',
  'Up', 'Down', 'Left', 'Right', 'Home', 'End', 'PageUp', 'PageDown',
  ...Array.from({length: 12}, (_, i) => `F${i + 1}`),
] as const

const LETTERS = 'abcdefghijklmnopqrstuvwxyz'.split('')
const DIGITS = '0123456789'.split('')

/** Every accepted named key, in a stable order (for help text and errors). */
export const NAMED_KEYS: readonly string[] = Object.freeze([
  ...BASE_KEYS,
  ...LETTERS.map((c) => `C-${c}`),
  ...[...LETTERS, ...DIGITS].map((c) => `M-${c}`),
  ...['Enter', 'BSpace', 'Up', 'Down', 'Left', 'Right'].map((k) => `M-${k}`),
])

const KEY_SET = new Set(NAMED_KEYS)
/** Case-insensitive lookup of the base names (`enter` → `Enter`); modifier forms stay exact. */
const BY_LOWER = new Map<string, string>(BASE_KEYS.map((k) => [k.toLowerCase(), k]))

export function isNamedKey(key: string): boolean {
  return canonicalKey(key) !== undefined
}

/**
 * The canonical spelling of a named key, or undefined when it is not one. `enter` and `ENTER`
 * map to `Enter`; `C-C` maps to `C-c` (control is case-blind); `M-a` and `M-A` differ and only
 * the listed forms are accepted.
 */
export function canonicalKey(key: string): string | undefined {
  if (KEY_SET.has(key)) return key
  const base = BY_LOWER.get(key.toLowerCase())
  if (base) return base
  const ctrl = /^c-([a-z])$/i.exec(key)
  if (ctrl) return `C-${ctrl[1].toLowerCase()}`
  const meta = /^m-(.+)$/i.exec(key)
  if (meta) {
    const rest = BY_LOWER.get(meta[1].toLowerCase())
    const candidate = `M-${rest ?? meta[1]}`
    if (KEY_SET.has(candidate)) return candidate
  }
  return undefined
}
