/**
 * Gemini CLI (`gemini`, npm `@google/gemini-cli`) as an svc harness: an interactive session in
 * tmux with the task as its first prompt, its first run answered in its config
 * (gemini-config.ts), its activity reported by its own hooks (`svc hook gemini <event>`), its
 * usage read from its session file.
 */
import {readFile} from 'node:fs/promises'
import {GEMINI_CREDENTIALS_FILE, prepareGeminiHome} from './gemini-config.js'
import {clipLine, firstString, toolDetail as detailOf} from './tool-detail.js'
import type {HarnessModule, HookReport, LaunchContext, SessionUsage} from './types.js'

const str = (v: unknown) => (typeof v === 'string' ? v : '')

/** The part of a tool call worth showing: the command, the file, the pattern, the URL... */
function toolSummary(name: string, input: any): string {
  if (!input || typeof input !== 'object') return ''
  const pick = (...keys: string[]) => keys.map((k) => str(input[k])).find(Boolean) ?? ''
  switch (name) {
    case 'run_shell_command':
      return pick('command', 'description')
    case 'read_file':
    case 'write_file':
    case 'replace':
      return pick('file_path', 'absolute_path')
    case 'glob':
    case 'grep_search':
    case 'search_file_content':
      return [pick('pattern'), pick('dir_path', 'path')].filter(Boolean).join(' in ')
    case 'list_directory':
      return pick('dir_path', 'path')
    case 'read_many_files':
      return Array.isArray(input.include) ? input.include.filter((x: unknown) => typeof x === 'string').join(' ') : ''
    case 'google_web_search':
      return pick('query')
    case 'web_fetch':
      return pick('prompt', 'url')
    case 'ask_user':
      return Array.isArray(input.questions) ? str(input.questions[0]?.question) : ''
    case 'exit_plan_mode':
      return pick('plan_path')
    default:
      return firstString(input)
  }
}

/** `run_shell_command: npm test`: the tool's name, then a one-line summary, at most ~200 characters. */
export function toolDetail(name: unknown, input: unknown): string {
  return detailOf(name, toolSummary(typeof name === 'string' ? name : '', input))
}

/** Tools that ask the user something: the agent waits for an answer, not for a tool. */
const QUESTION_TOOLS = new Set(['ask_user', 'exit_plan_mode'])

/** A `Notification` of a tool confirmation: `Confirm Shell Command: rm -rf build`. */
function permissionDetail(p: Record<string, any>): string {
  const d = (p.details && typeof p.details === 'object' ? p.details : {}) as Record<string, any>
  const what = str(d.command) || str(d.filePath) || str(d.fileName) || str(d.toolDisplayName) || str(d.toolName) || (Array.isArray(d.urls) ? d.urls.join(' ') : '') || str(d.prompt)
  const title = str(d.title) || str(p.message) || 'Permission requested'
  return clipLine((what ? `${title}: ${what}` : title))
}

/**
 * Gemini CLI 0.61 hook event → activity. `BeforeTool` fires before a tool's confirmation
 * dialog, and nothing fires once the user answers it: after an approval the agent shows
 * `waiting_for_input` until the tool ends (`AfterTool`). Tools the session allows without asking
 * (read-only tools, `--approval-mode`, "allow for this session") show `executing` throughout.
 */
export function geminiOnHook(event: string, payload: unknown): HookReport | null {
  const p = (payload && typeof payload === 'object' ? payload : {}) as Record<string, any>
  switch (event) {
    case 'BeforeAgent':
    case 'AfterTool':
      // A prompt went in, or a tool's result goes back to the model: the model works.
      return {activity: 'thinking'}
    case 'BeforeTool':
      if (QUESTION_TOOLS.has(p.tool_name)) return {activity: 'waiting_for_input', detail: toolDetail(p.tool_name, p.tool_input)}
      return {activity: 'executing', detail: toolDetail(p.tool_name, p.tool_input)}
    case 'Notification':
      // ToolPermission is the only notification type 0.61 sends: a confirmation dialog is up.
      if (p.notification_type !== undefined && p.notification_type !== 'ToolPermission') return null
      return {activity: 'waiting_for_input', detail: permissionDetail(p)}
    case 'AfterAgent':
      // Once per turn, after the model's final answer: the CLI waits for the next prompt.
      return {activity: 'idle', turnEnded: true}
    default:
      // SessionStart, SessionEnd: the broker knows the process started or ended.
      return null
  }
}

/**
 * The cumulative usage of one Gemini CLI session, from its session file (the JSONL a hook
 * payload names in `transcript_path`). The file is a log of records: a message
 * (`{id, type, tokens?, model?}`, written again under the same id when it changes) or a
 * `{"$set": {messages}}` that replaces them all (on resume or rewind); replaying it gives the
 * session's messages, whose `tokens` (one model call each) are summed. Gemini's `input` counts
 * the cached prompt tokens too: they are reported apart, as cache reads; thinking tokens are
 * billed as output. Resolves undefined when the file cannot be read.
 */
export async function geminiSessionUsage(transcriptPath: string, sessionId?: string): Promise<SessionUsage | undefined> {
  let text: string
  try {
    text = await readFile(transcriptPath, 'utf8')
  } catch {
    return undefined
  }
  let session = sessionId ?? ''
  let messages = new Map<string, any>()
  for (const line of text.split('\n')) {
    if (!line) continue
    let rec: any
    try {
      rec = JSON.parse(line)
    } catch {
      continue // a line being written right now
    }
    if (!rec || typeof rec !== 'object') continue
    if (!session && typeof rec.sessionId === 'string') session = rec.sessionId
    if (Array.isArray(rec.$set?.messages)) messages = new Map(rec.$set.messages.filter((m: any) => m?.id).map((m: any) => [m.id, m]))
    else if (typeof rec.id === 'string' && typeof rec.type === 'string') messages.set(rec.id, rec)
  }
  if (!session) return undefined
  const total: SessionUsage = {sessionId: session, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, modelCalls: 0}
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0)
  for (const m of messages.values()) {
    const t = m.tokens
    if (m.type !== 'gemini' || !t || typeof t !== 'object') continue
    const cached = n(t.cached)
    total.inputTokens += Math.max(0, n(t.input) - cached) + n(t.tool)
    total.cacheReadTokens! += cached
    total.outputTokens += n(t.output) + n(t.thoughts)
    total.modelCalls++
    if (typeof m.model === 'string' && m.model) total.model = m.model
  }
  return total
}

/**
 * The usage to send with a hook's report: at the end of a turn (`AfterAgent`) or session, the
 * session's totals from the file the payload names; otherwise none. The hook entry awaits it
 * after `onHook`.
 */
export async function geminiHookUsage(event: string, payload: unknown): Promise<SessionUsage | undefined> {
  const p = (payload && typeof payload === 'object' ? payload : {}) as Record<string, any>
  if (event !== 'AfterAgent' && event !== 'SessionEnd') return undefined
  if (typeof p.transcript_path !== 'string' || !p.transcript_path) return undefined
  return geminiSessionUsage(p.transcript_path, typeof p.session_id === 'string' && p.session_id ? p.session_id : undefined)
}

/** What Gemini CLI answers in AfterAgent's `prompt_response` for a turn that got no answer. */
const NO_RESPONSE = '[no response text]'

/**
 * The error a turn ended on, from the session file: Gemini CLI fires no hook for a failed model
 * request (no retries are left, an auth refusal), only AfterAgent with no response text, and
 * writes the error it showed as a message of type `error` after the turn's prompt
 * (`[API Error: {...}]`). Read only for such an AfterAgent; the record is written as the hook
 * fires, so the file is read again for up to 500 ms.
 */
export async function geminiHookError(event: string, payload: unknown): Promise<string | undefined> {
  const p = (payload && typeof payload === 'object' ? payload : {}) as Record<string, any>
  if (event !== 'AfterAgent' || typeof p.transcript_path !== 'string' || !p.transcript_path) return undefined
  if (typeof p.prompt_response === 'string' && p.prompt_response.trim() && p.prompt_response !== NO_RESPONSE) return undefined
  for (let i = 0; i < 6; i++) {
    const found = await geminiTurnError(p.transcript_path)
    if (found) return found
    await new Promise((r) => setTimeout(r, 100))
  }
  return undefined
}

/** The `error` message after the session's last user message, if any (one line, clipped). */
export async function geminiTurnError(transcriptPath: string): Promise<string | undefined> {
  let text: string
  try {
    text = await readFile(transcriptPath, 'utf8')
  } catch {
    return undefined
  }
  let messages = new Map<string, any>()
  for (const line of text.split('\n')) {
    let rec: any
    try {
      rec = line ? JSON.parse(line) : null
    } catch {
      continue
    }
    if (!rec || typeof rec !== 'object') continue
    if (Array.isArray(rec.$set?.messages)) messages = new Map(rec.$set.messages.filter((m: any) => m?.id).map((m: any) => [m.id, m]))
    else if (typeof rec.id === 'string' && typeof rec.type === 'string') messages.set(rec.id, rec)
  }
  const list = [...messages.values()]
  const lastUser = list.map((m) => m.type).lastIndexOf('user')
  const error = list.slice(lastUser + 1).find((m) => m.type === 'error')
  if (!error) return undefined
  const content = typeof error.content === 'string' ? error.content : JSON.stringify(error.content ?? '')
  return clipLine(content.replace(/^\[(.*)\]$/s, '$1')) || undefined
}

export const gemini: HarnessModule = {
  type: 'gemini',
  displayName: 'Gemini CLI',
  executable: 'gemini',
  install: 'npm install -g @google/gemini-cli',
  auth: {
    default: 'api-key',
    types: {
      'api-key': {secrets: ['GEMINI_API_KEY'], description: 'a Gemini API key from Google AI Studio'},
      'vertex-ai': {
        secrets: ['GOOGLE_API_KEY'],
        description: 'a Vertex AI API key (GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION go in the harness config\'s env)',
      },
      'credentials-file': {
        secrets: [],
        credentialsFile: GEMINI_CREDENTIALS_FILE,
        signIn: '`gemini` (Login with Google)',
        description: "the broker user's own Gemini CLI login with Google (~/.gemini/oauth_creds.json)",
      },
    },
  },
  args(ctx: LaunchContext) {
    const args: string[] = []
    if (ctx.model) args.push('--model', ctx.model)
    // `latest` is this agent's own last session: its HOME holds no other. With none (the agent
    // stopped before its first prompt) Gemini CLI warns and starts a new one.
    if (ctx.resume) args.push('--resume', 'latest')
    // One argv element with `=`: a task starting with `-` is still the prompt, not an option.
    else if (ctx.task) args.push(`--prompt-interactive=${ctx.task}`)
    return args
  },
  taskInArgs: true,
  env: (ctx: LaunchContext) => ({
    // Config and sessions in the agent's HOME even when the broker's environment names another.
    GEMINI_CLI_HOME: ctx.home,
    // Gemini CLI otherwise starts a second Node process of itself (to raise the heap limit):
    // twice the start-up time, which on a loaded machine is many seconds, and a first process
    // that ignores SIGHUP/SIGTERM (it can outlive its tmux session). Node's default heap is
    // enough for a session; a harness config's env setting it (to "" for the relaunch) wins.
    ...(ctx.env.GEMINI_CLI_NO_RELAUNCH === undefined ? {GEMINI_CLI_NO_RELAUNCH: 'true'} : {}),
    // Vertex AI through the same SDK the CLI uses (the auth type alone picks the endpoint too).
    ...(ctx.authType === 'vertex-ai' ? {GOOGLE_GENAI_USE_VERTEXAI: 'true'} : {}),
  }),
  prepare: prepareGeminiHome,
  onHook: geminiOnHook,
  usageOf: geminiHookUsage,
  errorOf: geminiHookError,
  // Gemini CLI parses a hook's stdout as JSON, and its stderr when stdout is empty (plain text
  // then shows in the terminal): an empty object says "nothing to change" and keeps it quiet.
  hookOutput: () => '{}',
}
