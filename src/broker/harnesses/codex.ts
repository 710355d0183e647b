/**
 * Codex CLI (`@openai/codex`, verified with 0.169). Interactive TUI in tmux; its config lives in
 * `CODEX_HOME` (`<agent HOME>/.codex`); activity comes from Codex's own lifecycle hooks
 * (`hooks.json`: UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, Stop, Interrupt), which
 * carry the hook's event JSON on stdin.
 */
import {mkdir, readFile} from 'node:fs/promises'
import {readRegularFile, unlinkPlantedLinks, writeHomeFile} from './json-file.js'
import {join} from 'node:path'
import {hooksJson, mergeConfigToml, svcMcpTable, type TomlTable, type TomlValue} from './codex-config.js'
import {clipLine, toolDetail} from './tool-detail.js'
import type {HarnessModule, HookReport, LaunchContext, SessionUsage} from './types.js'
import {approvalWaitSeconds, permissionAskOf, permissionRequestOutput} from './permission-hook.js'

/** The model provider svc writes for API-key auth (the key stays in the environment). */
export const CODEX_PROVIDER = 'svc-openai'
const DEFAULT_BASE_URL = 'https://api.openai.com/v1'

/** `default_thinking_level` -> Codex's `model_reasoning_effort`. */
const EFFORT: Record<string, string> = {off: 'none', low: 'low', medium: 'medium', high: 'high'}

const codexHome = (ctx: Pick<LaunchContext, 'home'>) => join(ctx.home, '.codex')

function args(ctx: LaunchContext): string[] {
  const out: string[] = ctx.resume ? ['resume', '--last'] : []
  // Hooks are ours (written by prepare, rewritten on every start): Codex would otherwise skip
  // them until someone reviews them in its /hooks screen. This flag also keeps the session in
  // process (no shared background server outliving the agent's tmux session); --no-daemon says so
  // outright for versions where the flag alone does not.
  out.push('--dangerously-bypass-hook-trust', '--no-daemon')
  if (ctx.model) out.push('--model', ctx.model)
  const effort = ctx.thinkingLevel ? EFFORT[ctx.thinkingLevel] : undefined
  if (effort) out.push('--config', `model_reasoning_effort="${effort}"`)
  // `--` so a task starting with "-" stays the prompt.
  if (ctx.task && !ctx.resume) out.push('--', ctx.task)
  return out
}

/** The root keys and tables svc owns in `config.toml`. */
export function codexConfig(ctx: LaunchContext): {root: Record<string, TomlValue | undefined>; tables: TomlTable[]} {
  const apiKey = ctx.authType !== 'credentials-file'
  const root: Record<string, TomlValue | undefined> = {
    // API-key auth goes through a provider of our own: Codex's built-in `openai` provider ignores
    // OPENAI_BASE_URL and, with no `codex login`, stops at its sign-in screen.
    model_provider: apiKey ? CODEX_PROVIDER : undefined,
    // The agent works unattended in its own work tree and repository; svc's sandbox (bubblewrap,
    // a container) is the boundary. Codex's own Linux sandbox cannot nest inside bubblewrap
    // (verified: it needs a writable /tmp and its helper on PATH). A harness config's args (`-a on-request -s
    // workspace-write`) override both: Codex then asks before a command the model wants to run
    // outside its sandbox, and the PermissionRequest hook makes that ask an approval
    // (test/e2e/approvals-codex.test.ts). Codex 0.169 has no `untrusted` policy any more.
    approval_policy: 'never',
    sandbox_mode: 'danger-full-access',
    check_for_update_on_startup: false,
  }
  const tables: TomlTable[] = []
  if (apiKey) {
    tables.push({
      path: ['model_providers', CODEX_PROVIDER],
      entries: {name: 'OpenAI (svc)', base_url: ctx.env.OPENAI_BASE_URL || DEFAULT_BASE_URL, env_key: 'OPENAI_API_KEY', wire_api: 'responses'},
    })
  }
  // The work tree alone is trusted: Codex looks its working directory up first, so nothing else
  // is needed (verified with Codex 0.169 on an agent's own repository), and nothing is read from
  // the work tree's `.git`, which the agent writes.
  tables.push({path: ['projects', ctx.workdir], entries: {trust_level: 'trusted'}})
  tables.push({path: ['analytics'], entries: {enabled: false}})
  tables.push(svcMcpTable())
  return {root, tables}
}


async function prepare(ctx: LaunchContext): Promise<void> {
  const dir = codexHome(ctx)
  await mkdir(dir, {recursive: true, mode: 0o700})
  const configPath = join(dir, 'config.toml')
  for (const f of [configPath, join(dir, 'hooks.json')]) await unlinkPlantedLinks(f)
  const {root, tables} = codexConfig(ctx)
  // The agent writes this HOME: read only a regular file (no FIFO to hang the broker on), write
  // without following a link (json-file.ts).
  await writeHomeFile(configPath, mergeConfigToml((await readRegularFile(configPath)) ?? '', root, tables), 0o600)
  await writeHomeFile(join(dir, 'hooks.json'), hooksJson(ctx.hookCommand, approvalWaitSeconds(ctx.env)), 0o600)
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined)

/** What a tool call does, in a few words: the command, the files a patch touches, else its input. */
export function toolSummary(tool: string, input: unknown): string {
  const inp = (input ?? {}) as Record<string, unknown>
  const command = str(inp.command) ?? (Array.isArray(inp.command) ? inp.command.join(' ') : undefined) ?? str(inp.cmd)
  if (tool === 'apply_patch' && command) {
    const files = [...command.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)].map((m) => m[1].trim())
    if (files.length > 0) return files.join(', ')
  }
  if (command) return command
  if (input === undefined || input === null) return ''
  return typeof input === 'string' ? input : JSON.stringify(input)
}

const withSummary = (tool: string, summary: string) => toolDetail(tool, summary)

function firstQuestion(input: unknown): string {
  const qs = (input as {questions?: Array<{question?: unknown}>} | null)?.questions
  return Array.isArray(qs) ? (str(qs[0]?.question) ?? '') : ''
}

function onHook(event: string, payload: unknown): HookReport | null {
  const p = (payload ?? {}) as Record<string, unknown>
  const tool = str(p.tool_name) ?? 'tool'
  switch (event) {
    case 'UserPromptSubmit':
    case 'PostToolUse':
      // A prompt went in, or a tool's result went back: the model is working.
      return {activity: 'thinking'}
    case 'PreToolUse':
      // The model asking the user a question is a tool call in Codex; it waits for an answer.
      if (tool === 'request_user_input') return {activity: 'waiting_for_input', detail: clipLine(`Question: ${firstQuestion(p.tool_input)}`)}
      return {activity: 'executing', detail: withSummary(tool, toolSummary(tool, p.tool_input))}
    case 'PermissionRequest':
      return {activity: 'waiting_for_input', detail: clipLine(`Permission: ${withSummary(tool, toolSummary(tool, p.tool_input))}`)}
    case 'Stop':
    // The user pressed Esc: the turn is over (no Stop follows) and Codex waits for the next message.
    case 'Interrupt':
      return {activity: 'idle', turnEnded: true}
    default:
      return null
  }
}

/**
 * Cumulative usage of the session from its transcript (Codex writes a `token_count` event with
 * the session's running totals after every model call). OpenAI's `input_tokens` include the
 * cached ones; they are split here so nothing is counted twice. Pure: the caller reads the file.
 */
export function usageFromTranscript(text: string, sessionId: string): SessionUsage | null {
  let totals: Record<string, unknown> | null = null
  let calls = 0
  let model: string | undefined
  for (const line of text.split('\n')) {
    if (line.includes('"token_count"')) {
      try {
        const info = JSON.parse(line)?.payload?.info
        if (info?.total_token_usage) {
          totals = info.total_token_usage
          calls++
        }
      } catch {
        // A line being written right now: the next report has it.
      }
    } else if (line.includes('"turn_context"')) {
      try {
        model = str(JSON.parse(line)?.payload?.model) ?? model
      } catch {
        // as above
      }
    }
  }
  if (!totals) return null
  const num = (k: string) => (typeof totals![k] === 'number' ? (totals![k] as number) : 0)
  const cached = num('cached_input_tokens')
  return {
    sessionId,
    inputTokens: Math.max(0, num('input_tokens') - cached),
    outputTokens: num('output_tokens'),
    cacheReadTokens: cached,
    cacheWriteTokens: num('cache_write_input_tokens'),
    modelCalls: calls,
    model,
  }
}

/**
 * The usage to send with a hook's report: for `Stop`, read from the transcript the payload names
 * (`transcript_path`); undefined for other events or when there is nothing to read. Never throws.
 */
export async function codexHookUsage(event: string, payload: unknown): Promise<SessionUsage | undefined> {
  if (event !== 'Stop') return undefined
  const p = (payload ?? {}) as Record<string, unknown>
  const path = str(p.transcript_path)
  const sessionId = str(p.session_id)
  if (!path || !sessionId) return undefined
  try {
    const usage = usageFromTranscript(await readFile(path, 'utf8'), sessionId)
    if (usage && !usage.model) usage.model = str(p.model)
    return usage ?? undefined
  } catch {
    return undefined
  }
}

export const codex: HarnessModule = {
  type: 'codex',
  displayName: 'Codex CLI',
  executable: 'codex',
  install: 'npm install -g @openai/codex (Codex CLI 0.169 or later)',
  auth: {
    default: 'api-key',
    types: {
      'api-key': {secrets: ['OPENAI_API_KEY'], description: 'an OpenAI API key'},
      'credentials-file': {secrets: [], credentialsFile: '.codex/auth.json', signIn: '`codex login`', description: "the user's own `codex login` (ChatGPT sign-in), copied from ~/.codex/auth.json"},
    },
  },
  args,
  taskInArgs: true,
  // Set outright: a CODEX_HOME inherited from the broker's user would point at the user's own config.
  env: (ctx) => ({CODEX_HOME: codexHome(ctx)}),
  prepare,
  onHook,
  usageOf: codexHookUsage,
  // Codex runs its PermissionRequest hook before it shows its approval prompt (the prompt comes only when the hook decides nothing).
  permissionAsk: (event, payload) => permissionAskOf(event, payload, toolSummary),
  permissionAnswer: (_event, verdict) => permissionRequestOutput(verdict),
}
