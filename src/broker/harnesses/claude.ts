/**
 * Claude Code (`claude`, npm `@anthropic-ai/claude-code`) as an svc harness: an interactive
 * session in tmux, its first run answered in its config (claude-config.ts), its activity reported
 * by its own hooks (`svc hook claude <event>`), its usage read from its session transcript.
 */
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {CLAUDE_CREDENTIALS_FILE, prepareClaudeHome} from './claude-config.js'
import {claudeHookUsage} from './claude-transcript.js'
import {clipLine, firstString, toolDetail as detailOf} from './tool-detail.js'
import type {HarnessModule, HookReport, LaunchContext} from './types.js'
import {permissionAskOf, permissionRequestOutput} from './permission-hook.js'

export {claudeHookUsage, claudeSessionUsage} from './claude-transcript.js'


/** The part of a tool call worth showing: the command, the file, the pattern, the URL... */
function toolSummary(name: string, input: any): string {
  if (!input || typeof input !== 'object') return ''
  const pick = (...keys: string[]) => {
    for (const k of keys) if (typeof input[k] === 'string' && input[k]) return input[k] as string
    return ''
  }
  switch (name) {
    case 'Bash':
      return pick('command', 'description')
    case 'Read':
    case 'Write':
    case 'Edit':
    case 'MultiEdit':
    case 'NotebookEdit':
      return pick('file_path', 'notebook_path')
    case 'Grep':
    case 'Glob':
      return [pick('pattern'), pick('path')].filter(Boolean).join(' in ')
    case 'WebFetch':
      return pick('url')
    case 'WebSearch':
      return pick('query')
    case 'Task':
    case 'Agent':
      return pick('description', 'subagent_type')
    default:
      return firstString(input)
  }
}

/** `Bash: npm test`: the tool's name, then a one-line summary, at most ~200 characters. */
export function toolDetail(name: unknown, input: unknown): string {
  return detailOf(name, toolSummary(typeof name === 'string' ? name : '', input))
}

/** Tools that ask the user something: the model waits for an answer, not for a tool. */
const QUESTION_TOOLS = new Set(['AskUserQuestion', 'ExitPlanMode'])

/** Notification types that mean "the user must answer" (the others: idle reminders, auth). */
const WAITING_NOTIFICATIONS = new Set(['permission_prompt', 'elicitation_dialog'])

/** What a StopFailure says went wrong: its message, with the category when the message lacks it. */
export function claudeFailure(p: Record<string, any>): string {
  const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : '')
  const category = str(p.error)
  const message = str(p.last_assistant_message) || str(p.error_details) || str(p.error_message)
  if (!message) return clipLine(category ? `the model request failed: ${category}` : 'the model request failed')
  return clipLine(category && !message.includes(category) ? `${message} (${category})` : message)
}

export function claudeOnHook(event: string, payload: unknown): HookReport | null {
  const p = (payload && typeof payload === 'object' ? payload : {}) as Record<string, any>
  switch (event) {
    case 'UserPromptSubmit':
    case 'PostToolUse':
    case 'PostToolUseFailure':
      // A prompt went in, or a tool's result goes back: the model works. The empty detail clears
      // the last tool's (the Hub keeps a detail that a report leaves out).
      return {activity: 'thinking', detail: ''}
    case 'PreToolUse':
      if (QUESTION_TOOLS.has(p.tool_name)) return {activity: 'waiting_for_input', detail: toolDetail(p.tool_name, p.tool_input)}
      return {activity: 'executing', detail: toolDetail(p.tool_name, p.tool_input)}
    case 'PermissionRequest':
      return {activity: 'waiting_for_input', detail: clipLine(`Permission: ${toolDetail(p.tool_name, p.tool_input)}`)}
    case 'Notification': {
      const type = typeof p.notification_type === 'string' ? p.notification_type : ''
      // Older payloads carry only the message ("Claude needs your permission to use Bash").
      const waiting = WAITING_NOTIFICATIONS.has(type) || (!type && /permission|needs your/i.test(String(p.message ?? '')))
      if (!waiting) return null
      // A permission prompt's notification comes after PermissionRequest (or PreToolUse), whose
      // detail names the command asked about; its own message ("Claude needs your permission")
      // says less, so the detail is left as it is.
      if (type === 'permission_prompt' || !type) return {activity: 'waiting_for_input'}
      return {activity: 'waiting_for_input', detail: clipLine(String(p.message ?? 'Claude Code is waiting for input'))}
    }
    case 'Stop':
      return {activity: 'idle', detail: '', turnEnded: true}
    case 'StopFailure': {
      // The turn ended on an API error (unreachable endpoint, 5xx, auth, rate limit) after Claude
      // Code's own retries: it waits for the user again. `error` is only a category
      // (`server_error`, `authentication_failed`); the message it showed is the turn's last
      // assistant message ("API Error: Unable to connect to API (ConnectionRefused)").
      const error = claudeFailure(p)
      return {activity: 'idle', turnEnded: true, detail: error, error}
    }
    default:
      // SessionStart and anything else: nothing to report (the broker knows the session started).
      return null
  }
}

/**
 * `default_thinking_level` as Claude Code understands it: `off` turns extended thinking off
 * (MAX_THINKING_TOKENS=0); `low`, `medium`, `high` set its effort level.
 */
export function claudeThinkingEnv(level: string | undefined): Record<string, string> {
  switch (level) {
    case 'off':
      return {MAX_THINKING_TOKENS: '0'}
    case 'low':
    case 'medium':
    case 'high':
      return {CLAUDE_CODE_EFFORT_LEVEL: level}
    default:
      return {}
  }
}

/**
 * Whether Claude Code saved a conversation for this working directory in this HOME (what
 * `--continue` resumes). It keeps them in `~/.claude/projects/<cwd, each non-alphanumeric
 * character a dash>/<session>.jsonl`; a long name is cut and suffixed, hence the prefix match.
 */
export function hasClaudeSession(home: string, workdir: string): boolean {
  const name = workdir.replace(/[^a-zA-Z0-9]/g, '-')
  const prefix = name.slice(0, 200)
  try {
    const root = join(home, '.claude', 'projects')
    return readdirSync(root).some((d) => (d === name || (name.length > 200 && d.startsWith(prefix))) && readdirSync(join(root, d)).some((f) => f.endsWith('.jsonl')))
  } catch {
    return false
  }
}

export const claude: HarnessModule = {
  type: 'claude',
  displayName: 'Claude Code',
  executable: 'claude',
  install: 'npm install -g @anthropic-ai/claude-code',
  auth: {
    default: 'api-key',
    types: {
      'api-key': {secrets: ['ANTHROPIC_API_KEY'], description: 'an Anthropic API key'},
      'oauth-token': {secrets: ['CLAUDE_CODE_OAUTH_TOKEN'], description: 'a Claude subscription token from `claude setup-token`'},
      'credentials-file': {secrets: [], credentialsFile: CLAUDE_CREDENTIALS_FILE, description: "the broker user's own Claude Code login (~/.claude/.credentials.json)"},
    },
  },
  args(ctx: LaunchContext) {
    const args: string[] = []
    if (ctx.model) args.push('--model', ctx.model)
    // `claude --continue` with no saved conversation exits at once: then it starts afresh (and
    // gets the task, if any, as on a first run).
    if (ctx.resume && hasClaudeSession(ctx.home, ctx.workdir)) args.push('--continue')
    // The prompt is a positional argument, with no `--` before it (options after it must still
    // parse); a task starting with `-` gets a leading space so it is not taken for an option.
    else if (ctx.task) args.push(ctx.task.startsWith('-') ? ` ${ctx.task}` : ctx.task)
    return args
  },
  taskInArgs: true,
  env: (ctx: LaunchContext) => ({
    // No update checks, telemetry, error reports or other traffic besides the model's.
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    // No clone of the official plugin marketplace at first start (network, and seconds of it).
    CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1',
    // No IDE extension install prompt, and no terminal-title escape sequences in the pane.
    CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL: '1',
    CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
    ...claudeThinkingEnv(ctx.thinkingLevel),
  }),
  prepare: prepareClaudeHome,
  onHook: claudeOnHook,
  usageOf: claudeHookUsage,
  // Claude Code runs its PermissionRequest hook while its dialog is shown: whichever answers first wins.
  permissionAsk: (event, payload) => permissionAskOf(event, payload, toolSummary),
  permissionAnswer: (_event, verdict) => permissionRequestOutput(verdict),
}
