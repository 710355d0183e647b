/**
 * Named keys the CLI accepts (`svc keys demo Enter`), as the bytes a terminal sends for them.
 * The keys API takes literal keystrokes only, so the CLI translates; anything not named here is
 * sent as the literal string it is.
 */
const ESC = '\u001b'
const BASE: Record<string, string> = {
  Enter: '\r',
  Escape: ESC,
  Tab: '\t',
  BTab: `${ESC}[Z`,
  Space: ' ',
  BSpace: '\u007f',
  Delete: `${ESC}[3~`,
  Insert: `${ESC}[2~`,
  Up: `${ESC}[A`,
  Down: `${ESC}[B`,
  Right: `${ESC}[C`,
  Left: `${ESC}[D`,
  Home: `${ESC}[H`,
  End: `${ESC}[F`,
  PageUp: `${ESC}[5~`,
  PageDown: `${ESC}[6~`,
  F1: `${ESC}OP`,
  F2: `${ESC}OQ`,
  F3: `${ESC}OR`,
  F4: `${ESC}OS`,
  F5: `${ESC}[15~`,
  F6: `${ESC}[17~`,
  F7: `${ESC}[18~`,
  F8: `${ESC}[19~`,
  F9: `${ESC}[20~`,
  F10: `${ESC}[21~`,
  F11: `${ESC}[23~`,
  F12: `${ESC}[24~`,
}
const BY_LOWER = new Map(Object.keys(BASE).map((k) => [k.toLowerCase(), k]))

/** The bytes of a named key (`Enter`, `escape`, `C-c`, `M-x`, `Up`...), or undefined for a literal. */
export function namedKeyBytes(name: string): string | undefined {
  const base = BY_LOWER.get(name.toLowerCase())
  if (base) return BASE[base]
  const ctrl = /^C-([a-z@[\\\]^_])$/i.exec(name)
  if (ctrl) {
    const c = ctrl[1].toUpperCase().charCodeAt(0)
    return String.fromCharCode(c & 0x1f)
  }
  const meta = /^M-(.+)$/.exec(name)
  if (meta) {
    const rest = namedKeyBytes(meta[1]) ?? (meta[1].length === 1 ? meta[1] : undefined)
    return rest === undefined ? undefined : ESC + rest
  }
  return undefined
}

export const NAMED_KEY_HELP = 'Enter, Escape, Tab, BTab, Space, BSpace, Delete, Insert, Up, Down, Left, Right, Home, End, PageUp, PageDown, F1-F12, C-<letter>, M-<key>'
