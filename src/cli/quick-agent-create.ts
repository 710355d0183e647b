/**
 * The argv of `svc agent create` read without oclif, for the quick path (quick-main.ts): loading
 * oclif and its command table is most of the CLI's start (~100 ms of CPU of ~250), and an agent's
 * start waits for it. Only argv whose meaning is certain is read here; for anything else
 * (help, an unknown, repeated or valueless flag, a value that looks like a flag, `--`, a bad
 * integer or option, --secret, a task oclif would read from stdin) this answers null and oclif
 * parses it as always, with its own messages. AGENT_CREATE_FLAGS is tested against the command
 * class's flags (quick-agent-create.test.ts), and the parse against oclif's on a table of argv.
 */
import type {AgentCreateArgs, AgentCreateFlags} from './agent-create-run.js'

export type QuickFlag = {type: 'string'; options?: readonly string[]} | {type: 'integer'; min?: number; max?: number} | {type: 'boolean'}

/**
 * commands/agent/create.ts's flags (and the base `--json`) as the quick parser reads them.
 * `secret` is absent on purpose: oclif's multiple flags take the words after them too.
 */
export const AGENT_CREATE_FLAGS: Record<string, QuickFlag> = {
  json: {type: 'boolean'},
  harness: {type: 'string'},
  project: {type: 'string'},
  template: {type: 'string'},
  task: {type: 'string'},
  broker: {type: 'string'},
  runtime: {type: 'string'},
  role: {type: 'string', options: ['readonly', 'baseline', 'full', 'none']},
  attempts: {type: 'integer', min: 1, max: 20},
  check: {type: 'string'},
  parent: {type: 'string'},
  'max-turns': {type: 'integer', min: 1},
  'max-model-calls': {type: 'integer', min: 1},
  'max-duration': {type: 'string'},
  'max-cost': {type: 'string'},
  'max-children': {type: 'integer', min: 0},
  'max-depth': {type: 'integer', min: 0},
  hub: {type: 'string'},
}

export interface QuickParse {
  args: AgentCreateArgs
  flags: AgentCreateFlags
  json: boolean
}

/**
 * argv after `agent create`, as oclif would parse it, or null when oclif must (see above).
 * `stdinIsTTY`: oclif reads a missing TASK from a stdin that is not a terminal.
 */
export function parseAgentCreate(argv: readonly string[], stdinIsTTY: boolean): QuickParse | null {
  const positional: string[] = []
  const flags: Record<string, string | number | boolean> = {}
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!
    if (!word.startsWith('-')) {
      if (word === '') return null
      positional.push(word)
      continue
    }
    if (!word.startsWith('--') || word === '--') return null
    const eq = word.indexOf('=')
    const name = word.slice(2, eq < 0 ? undefined : eq)
    const spec = Object.hasOwn(AGENT_CREATE_FLAGS, name) ? AGENT_CREATE_FLAGS[name] : undefined
    if (!spec || Object.hasOwn(flags, name)) return null
    if (spec.type === 'boolean') {
      if (eq >= 0) return null
      flags[name] = true
      continue
    }
    const value = eq >= 0 ? word.slice(eq + 1) : argv[++i]
    if (value === undefined || value === '' || value.startsWith('-')) return null
    if (spec.type === 'integer') {
      if (!/^\d+$/.test(value)) return null
      const n = Number.parseInt(value, 10)
      if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) return null
      flags[name] = n
    } else {
      if (spec.options && !spec.options.includes(value)) return null
      flags[name] = value
    }
  }
  if (positional.length < 1 || positional.length > 2 || (positional.length === 1 && !stdinIsTTY)) return null
  const {json, ...rest} = flags
  return {args: {name: positional[0]!, ...(positional.length === 2 && {task: positional[1]})}, flags: rest as AgentCreateFlags, json: argv.includes('--json')}
}
