/**
 * What Gemini CLI's first run needs in the agent's HOME so it never stops at a dialog, and its
 * hooks: `~/.gemini/settings.json` (auth type, no update checks, telemetry, IDE nudge or
 * compatibility warnings, the svc hooks, the thinking level) and `~/.gemini/trustedFolders.json`
 * (the agent's work tree trusted, else the CLI asks on first start and runs in safe mode).
 * Everything is merged into what the CLI itself wrote there before, so a restart keeps the
 * user's `/settings` choices; only the keys svc owns are rewritten.
 */
import {mkdir, realpath} from 'node:fs/promises'
import {join} from 'node:path'
import {readJsonObject, writeJsonFile} from './json-file.js'
import type {LaunchContext} from './types.js'
import {SVC_MCP_ARGS, SVC_MCP_COMMAND, SVC_MCP_NAME} from './svc-mcp.js'

/** The user's login file (`gemini` → Login with Google) that `credentials-file` auth copies in. */
export const GEMINI_CREDENTIALS_FILE = '.gemini/oauth_creds.json'

/** svc auth type → Gemini CLI's `security.auth.selectedType`. */
export const GEMINI_AUTH_SELECTED_TYPE: Readonly<Record<string, string>> = {
  'api-key': 'gemini-api-key',
  'vertex-ai': 'vertex-ai',
  'credentials-file': 'oauth-personal',
}

/**
 * The hook events svc listens to. Not `AfterModel` (it fires for every streamed chunk: a process
 * per chunk), nor `BeforeModel`/`BeforeToolSelection`/`PreCompress` (nothing to report that
 * `BeforeAgent` and `AfterTool` do not already say), nor `SessionStart`/`SessionEnd` (the broker
 * sees the process start and end): each hook is a process the CLI waits for.
 */
export const GEMINI_HOOK_EVENTS = ['BeforeAgent', 'BeforeTool', 'AfterTool', 'Notification', 'AfterAgent'] as const

/** The name svc's hook entries carry, so a restart replaces them and keeps any other hook. */
export const SVC_HOOK_NAME = 'svc-status'

/** One argv element for the `sh -c` line Gemini CLI runs a hook command with. */
export const shellQuote = (arg: string) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)

/**
 * `default_thinking_level` as Gemini CLI model aliases: Gemini 2.5 models take a token
 * `thinkingBudget` (0 turns thinking off; 2.5 Pro cannot, 128 is its floor), Gemini 3 models a
 * `thinkingLevel` (LOW or HIGH; they cannot turn thinking off). `medium` and unset keep the CLI's
 * own defaults (8192 tokens, HIGH). The aliases are the CLI's built-in ones, redefined the same
 * way with only the thinking part changed.
 */
export function thinkingAliases(level: string | undefined): Record<string, unknown> | null {
  const budgets: Record<string, [number, number, string]> = {off: [0, 128, 'LOW'], low: [1024, 1024, 'LOW'], high: [24576, 32768, 'HIGH']}
  const b = level ? budgets[level] : undefined
  if (!b) return null
  const thinking = (thinkingConfig: Record<string, unknown>) => ({generateContentConfig: {thinkingConfig}})
  return {
    'chat-base-2.5': {extends: 'chat-base', modelConfig: thinking({thinkingBudget: b[0]})},
    'chat-base-3': {extends: 'chat-base', modelConfig: thinking({thinkingLevel: b[2]})},
    'gemini-2.5-pro': {extends: 'chat-base-2.5', modelConfig: {model: 'gemini-2.5-pro', ...thinking({thinkingBudget: b[1]})}},
  }
}
const THINKING_ALIAS_KEYS = ['chat-base-2.5', 'chat-base-3', 'gemini-2.5-pro']

const isObject = (v: unknown): v is Record<string, any> => !!v && typeof v === 'object' && !Array.isArray(v)

/** Sets `value` at `path` inside `obj`, making (or replacing non-object) parents on the way. */
function setPath(obj: Record<string, any>, path: string, value: unknown) {
  const keys = path.split('.')
  let at = obj
  for (const k of keys.slice(0, -1)) {
    if (!isObject(at[k])) at[k] = {}
    at = at[k]
  }
  at[keys[keys.length - 1]] = value
}

/** The settings.json svc wants, merged into `prev` (what is there: the CLI's and the user's). */
export function geminiSettings(prev: Record<string, any>, ctx: Pick<LaunchContext, 'hookCommand' | 'authType' | 'thinkingLevel'>): Record<string, any> {
  const s: Record<string, any> = structuredClone(prev)
  const fixed: Record<string, unknown> = {
    // Auth chosen up front: no auth dialog.
    'security.auth.selectedType': GEMINI_AUTH_SELECTED_TYPE[ctx.authType] ?? GEMINI_AUTH_SELECTED_TYPE['api-key'],
    // The hooks must run: they are how the agent reports its activity. Without their
    // "Executing Hook" line in the pane.
    'hooksConfig.enabled': true,
    'hooksConfig.notifications': false,
    // No update checks or update prompts, no usage statistics, no telemetry.
    'general.enableAutoUpdate': false,
    'general.enableAutoUpdateNotification': false,
    'privacy.usageStatisticsEnabled': false,
    'telemetry.enabled': false,
    // No IDE integration or its nudge, no terminal-compatibility or home-directory warnings.
    'ide.enabled': false,
    'ide.hasSeenNudge': true,
    'ui.showCompatibilityWarnings': false,
    'ui.showHomeDirectoryWarning': false,
    // The hook reads the agent's identity and token from its environment: keep them if the
    // user turns on Gemini CLI's environment redaction (SVC_AUTH_TOKEN* match /TOKEN/).
    'security.environmentVariableRedaction.allowed': [
      ...new Set([
        ...(Array.isArray(s.security?.environmentVariableRedaction?.allowed) ? s.security.environmentVariableRedaction.allowed : []),
        'SVC_AUTH_TOKEN',
        'SVC_AUTH_TOKEN_FILE',
        'SVC_AGENT_ID',
        'SVC_HUB_ENDPOINT',
      ]),
    ],
  }
  for (const [path, value] of Object.entries(fixed)) setPath(s, path, value)
  // `svc mcp` as the MCP server `svc`, trusted (no confirmation per call): svc's sandbox and the
  // Hub's permissions are the boundary, as for the agent's shell.
  setPath(s, `mcpServers.${SVC_MCP_NAME}`, {command: SVC_MCP_COMMAND, args: SVC_MCP_ARGS, trust: true})

  const command = ctx.hookCommand.map(shellQuote).join(' ')
  const hooks: Record<string, any> = isObject(s.hooks) ? s.hooks : {}
  // svc's entries go from every event, also one svc no longer listens to (an older svc's).
  for (const event of Object.keys(hooks)) {
    const others = (Array.isArray(hooks[event]) ? hooks[event] : []).filter(
      (def: any) => !(Array.isArray(def?.hooks) && def.hooks.some((h: any) => h?.name === SVC_HOOK_NAME)),
    )
    if (others.length) hooks[event] = others
    else delete hooks[event]
  }
  for (const event of GEMINI_HOOK_EVENTS) {
    // The hook always answers quickly (it gives up on the Hub itself); the timeout is a backstop.
    hooks[event] = [...(hooks[event] ?? []), {matcher: '*', hooks: [{name: SVC_HOOK_NAME, type: 'command', command: `${command} ${event}`, timeout: 15_000}]}]
  }
  s.hooks = hooks

  const aliases = thinkingAliases(ctx.thinkingLevel)
  const custom: Record<string, any> = isObject(s.modelConfigs?.customAliases) ? s.modelConfigs.customAliases : {}
  for (const k of THINKING_ALIAS_KEYS) delete custom[k]
  if (aliases) Object.assign(custom, aliases)
  if (aliases || isObject(s.modelConfigs?.customAliases)) setPath(s, 'modelConfigs.customAliases', custom)
  return s
}

/** `prepare` of the Gemini CLI harness (see the file comment). Idempotent. */
export async function prepareGeminiHome(ctx: LaunchContext): Promise<void> {
  const dir = join(ctx.home, '.gemini')
  await mkdir(dir, {recursive: true, mode: 0o700})
  const settingsPath = join(dir, 'settings.json')
  await writeJsonFile(settingsPath, geminiSettings(await readJsonObject(settingsPath), ctx))
  const trustPath = join(dir, 'trustedFolders.json')
  // Gemini CLI matches the real path of its working directory: trust both spellings of a symlink.
  const real = await realpath(ctx.workdir).catch(() => ctx.workdir)
  await writeJsonFile(trustPath, {...(await readJsonObject(trustPath)), [ctx.workdir]: 'TRUST_FOLDER', [real]: 'TRUST_FOLDER'})
}
