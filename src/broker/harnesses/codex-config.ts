/**
 * Codex CLI's files in the agent's `CODEX_HOME`: the keys and tables svc owns in `config.toml`
 * (merged line by line into what Codex itself wrote there, so its own state survives every
 * start), and `hooks.json`, which svc owns whole.
 */
import {SVC_MCP_ARGS, SVC_MCP_COMMAND, SVC_MCP_ENV, SVC_MCP_NAME} from './svc-mcp.js'
import {HOOK_TIMEOUT_MARGIN_S} from './permission-hook.js'

export type TomlScalar = string | number | boolean
export type TomlValue = TomlScalar | TomlScalar[]

export interface TomlTable {
  /** The header's key path, each part one key (`['projects', '/work/x']` -> `[projects."/work/x"]`). */
  path: string[]
  entries: Record<string, TomlValue>
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/

/** A key as TOML writes it: bare when it can be, else a basic string. */
export function tomlKey(key: string): string {
  return BARE_KEY.test(key) ? key : tomlString(key)
}

/** A TOML basic string (JSON's escapes are a subset of TOML's, except DEL, escaped here too). */
function tomlString(value: string): string {
  return JSON.stringify(value).replace(/\u007f/g, '\\u007F')
}

export function tomlValue(value: TomlValue): string {
  if (Array.isArray(value)) return `[${value.map((v) => tomlValue(v)).join(', ')}]`
  if (typeof value === 'string') return tomlString(value)
  return String(value)
}

/**
 * A table header's key path, normalised so `[projects."/a"]`, `[ projects . "/a" ]` and
 * `[projects.'/a']` compare equal; null when the line is no table header.
 */
export function headerPath(line: string): string[] | null {
  const m = /^\s*\[(\[?)(.*?)\](\]?)\s*(#.*)?$/.exec(line)
  if (!m || m[1].length !== m[3].length) return null
  const parts: string[] = []
  let rest = m[2].trim()
  while (rest.length > 0) {
    let part: string
    if (rest.startsWith('"')) {
      const end = /^"(?:[^"\\]|\\.)*"/.exec(rest)
      if (!end) return null
      try {
        part = JSON.parse(end[0])
      } catch {
        return null
      }
      rest = rest.slice(end[0].length)
    } else if (rest.startsWith("'")) {
      const end = rest.indexOf("'", 1)
      if (end < 0) return null
      part = rest.slice(1, end)
      rest = rest.slice(end + 1)
    } else {
      const end = /^[A-Za-z0-9_-]+/.exec(rest)
      if (!end) return null
      part = end[0]
      rest = rest.slice(end[0].length)
    }
    parts.push(part)
    rest = rest.trim()
    if (rest.startsWith('.')) rest = rest.slice(1).trim()
    else if (rest.length > 0) return null
  }
  return parts.length > 0 ? parts : null
}

const samePath = (a: string[], b: string[]) => a.length === b.length && a.every((p, i) => p === b[i])

/**
 * `existing` with svc's root keys and tables replaced by `root` and `tables`; everything else
 * (what Codex wrote: notices, hook state, other projects) kept as it was. Owned root keys are
 * single-line (svc writes them so); a value of `undefined` removes the key.
 */
export function mergeConfigToml(existing: string, root: Record<string, TomlValue | undefined>, tables: TomlTable[]): string {
  const lines = existing.length > 0 ? existing.replace(/\r\n/g, '\n').replace(/\n$/, '').split('\n') : []
  const firstHeader = lines.findIndex((l) => headerPath(l) !== null)
  const rootLines = firstHeader < 0 ? lines : lines.slice(0, firstHeader)
  const rest = firstHeader < 0 ? [] : lines.slice(firstHeader)

  const owned = new Set(Object.keys(root))
  const keptRoot = rootLines.filter((l) => {
    const m = /^\s*("(?:[^"\\]|\\.)*"|[A-Za-z0-9_-]+)\s*=/.exec(l)
    if (!m) return true
    const key = m[1].startsWith('"') ? JSON.parse(m[1]) : m[1]
    return !owned.has(key)
  })

  const keptSections: string[] = []
  let dropping = false
  for (const line of rest) {
    const path = headerPath(line)
    if (path) dropping = tables.some((t) => samePath(t.path, path))
    if (!dropping) keptSections.push(line)
  }

  const out: string[] = []
  for (const [key, value] of Object.entries(root)) if (value !== undefined) out.push(`${tomlKey(key)} = ${tomlValue(value)}`)
  const trimmedRoot = trimBlank(keptRoot)
  if (trimmedRoot.length > 0) out.push(...trimmedRoot)
  for (const t of tables) {
    out.push('', `[${t.path.map(tomlKey).join('.')}]`)
    for (const [key, value] of Object.entries(t.entries)) out.push(`${tomlKey(key)} = ${tomlValue(value)}`)
  }
  const trimmedRest = trimBlank(keptSections)
  if (trimmedRest.length > 0) out.push('', ...trimmedRest)
  return out.join('\n') + '\n'
}

function trimBlank(lines: string[]): string[] {
  let a = 0
  let b = lines.length
  while (a < b && lines[a].trim() === '') a++
  while (b > a && lines[b - 1].trim() === '') b--
  return lines.slice(a, b)
}

/** One argv as a POSIX shell command line (Codex runs a hook's `command` with the shell). */
export function shellCommand(argv: string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_./:=@%+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ')
}

/** The Codex hook events svc listens to (each calls `svc hook codex <event>`, payload on stdin). */
export const HOOK_EVENTS = ['UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'PostToolUse', 'Stop', 'Interrupt'] as const

/**
 * `hooks.json`: every event svc maps, for every tool (no matcher). PermissionRequest waits on
 * its approval (approval-client.ts): its `timeout` (seconds) is the approval's wait plus a
 * margin; Codex shows its own approval prompt only after the hook decided nothing.
 */
export function hooksJson(hookCommand: string[], approvalWait = 600): string {
  const hooks: Record<string, unknown> = {}
  for (const event of HOOK_EVENTS) {
    const handler: Record<string, unknown> = {type: 'command', command: shellCommand([...hookCommand, event])}
    if (event === 'PermissionRequest') handler.timeout = approvalWait + HOOK_TIMEOUT_MARGIN_S
    hooks[event] = [{hooks: [handler]}]
  }
  return JSON.stringify({hooks}, null, 2) + '\n'
}

/**
 * `[mcp_servers.svc]`: `svc mcp`. Codex starts MCP servers with a filtered environment, so the
 * variables `svc mcp` needs are passed on by name (`env_vars`; verified with Codex 0.169).
 */
export function svcMcpTable(): TomlTable {
  return {path: ['mcp_servers', SVC_MCP_NAME], entries: {command: SVC_MCP_COMMAND, args: SVC_MCP_ARGS, env_vars: SVC_MCP_ENV}}
}
