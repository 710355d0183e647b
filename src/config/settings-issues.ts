/** A problem found in settings: where it is, which key, and what was expected versus found. */
export interface SettingsIssue {
  severity: 'error' | 'warning'
  /** The settings file, or null for a problem in an environment variable. */
  file: string | null
  line: number
  column: number
  /** Dotted key path ('' for a syntax error). */
  key: string
  message: string
  /** The variable, for a problem in an environment variable. */
  variable?: string
}

/** `file:line:column: key: expected X, found Y` (warnings add `warning:` before the key). */
export function formatIssue(i: SettingsIssue): string {
  const where = i.file ? `${i.file}:${i.line}:${i.column}` : (i.variable ?? 'environment')
  const sev = i.severity === 'warning' ? 'warning: ' : ''
  return `${where}: ${sev}${i.key ? `${i.key}: ` : ''}${i.message}`
}

/** Location of a value inside a settings file. */
export interface Location {
  file: string
  line: number
  column: number
}

/** Dotted key of a path; a part holding a dot is double-quoted (`rates."agent.tool"`), as `svc config` reads it. */
export const pathKey = (path: readonly string[]) => path.map((s) => (s.includes('.') ? `"${s}"` : s)).join('.')
