import {Chalk, type ChalkInstance} from 'chalk'

/** Human output helpers: stable text (snapshot-tested), colour only on a TTY without NO_COLOR. */
export function useColor(stream: NodeJS.WriteStream = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  return !!stream.isTTY && env.NO_COLOR === undefined && env.TERM !== 'dumb'
}

/**
 * chalk with colour on or off, as `useColor` decided for the stream being written. chalk's own
 * detection is not used: it looks at stdout only and honours FORCE_COLOR and CI variables,
 * while the rule here is per stream (errors go to stderr), TTY only, never with NO_COLOR; and
 * `--json` output is never painted. Level 1 (16 colours) writes the plain SGR codes, e.g.
 * `\u001b[31m...\u001b[39m`, that terminals, pagers (`less -R`) and the tests expect.
 */
const COLOUR = new Chalk({level: 1})
const PLAIN = new Chalk({level: 0})
export const paint = (color: boolean): ChalkInstance => (color ? COLOUR : PLAIN)

export const bold = (s: string, color: boolean) => paint(color).bold(s)

/** A plain table: upper-case headers, columns padded with two spaces, no trailing blanks. */
export function table(headers: string[], rows: Array<Array<string | number | null | undefined>>, color = false): string {
  const cells = rows.map((r) => r.map((c) => (c === null || c === undefined || c === '' ? '-' : String(c))))
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)))
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd()
  const head = line(headers.map((h) => h.toUpperCase()))
  return [color ? bold(head, true) : head, ...cells.map(line)].join('\n')
}

/** `key: value` lines with aligned values. */
export function fields(pairs: Array<[string, string | number | boolean | null | undefined]>): string {
  const w = Math.max(...pairs.map(([k]) => k.length))
  return pairs.map(([k, v]) => `${(k + ':').padEnd(w + 1)} ${v === null || v === undefined || v === '' ? '-' : String(v)}`).join('\n')
}
