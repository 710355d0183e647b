/**
 * What Claude Code's first run needs in the agent's HOME so it never stops at a dialog, and the
 * hooks that report its activity. Claude Code keeps its state in `~/.claude.json` (onboarding,
 * API-key approval, per-folder trust) and its settings in `~/.claude/settings.json` (hooks).
 * Both are merged, never replaced: Claude Code writes its own state into them as it runs, and a
 * restarted agent must keep it (sessions to `--continue`, tips seen, allowed tools).
 */
import {realpath} from 'node:fs/promises'
import {join} from 'node:path'
import {readJsonObject, writeJsonFile} from './json-file.js'
import type {LaunchContext} from './types.js'
import {SVC_MCP_ARGS, SVC_MCP_COMMAND, SVC_MCP_NAME} from './svc-mcp.js'
import {approvalWaitSeconds, HOOK_TIMEOUT_MARGIN_S} from './permission-hook.js'
import {claudeHttpHookSettings} from './claude-http-hooks.js'

/** The version whose release notes count as seen (so no "what's new" screen at start). */
export const CLAUDE_VERSION_SEEN = '2.1.197'

/**
 * The hook events svc listens to; each runs `svc hook claude <event>`, a process Claude Code
 * waits for. Not `SessionStart`: it has nothing to report (the broker knows the session started)
 * and Claude Code runs it before its first request, on the path from create to work.
 */
export const CLAUDE_HOOK_EVENTS = [
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PermissionRequest',
  'Notification',
  'Stop',
  'StopFailure',
] as const

/** The user's login file that `credentials-file` auth copies into the agent's HOME. */
export const CLAUDE_CREDENTIALS_FILE = '.claude/.credentials.json'

/** Claude Code approves a custom API key by its last 20 characters (never the whole key). */
export const keyApprovalId = (key: string) => key.slice(-20)

/** `~/.claude.json`: onboarding done, the key approved, the work tree trusted, nothing to announce. */
export function claudeState(existing: Record<string, any>, ctx: LaunchContext, userState: Record<string, any> = {}, realWorkdir?: string): Record<string, any> {
  const state: Record<string, any> = {...existing}
  state.hasCompletedOnboarding = true
  state.lastOnboardingVersion ??= CLAUDE_VERSION_SEEN
  state.lastReleaseNotesSeen ??= CLAUDE_VERSION_SEEN
  state.numStartups = Math.max(Number(state.numStartups) || 0, 1)
  state.autoUpdates = false
  state.hasIdeOnboardingBeenShown = {...(state.hasIdeOnboardingBeenShown ?? {}), vscode: true, cursor: true, windsurf: true}
  state.shiftEnterKeyBindingInstalled = true
  state.hasAcknowledgedCostThreshold = true
  state.bypassPermissionsModeAccepted = true
  // `svc mcp` as the user-scope MCP server `svc` (Claude Code passes its environment on).
  // `alwaysLoad`: its tools are always offered to the model, never deferred behind a tool search.
  // (Claude Code may still send a session's first request before the server is up.)
  state.mcpServers = {...(state.mcpServers ?? {}), [SVC_MCP_NAME]: {type: 'stdio', command: SVC_MCP_COMMAND, args: SVC_MCP_ARGS, env: {}, alwaysLoad: true}}
  const key = ctx.env.ANTHROPIC_API_KEY
  if (key && (ctx.authType === 'api-key' || !ctx.env.CLAUDE_CODE_OAUTH_TOKEN)) {
    const responses = state.customApiKeyResponses ?? {}
    const approved: string[] = Array.isArray(responses.approved) ? responses.approved : []
    const rejected: string[] = Array.isArray(responses.rejected) ? responses.rejected : []
    const id = keyApprovalId(key)
    state.customApiKeyResponses = {approved: approved.includes(id) ? approved : [...approved, id], rejected: rejected.filter((r) => r !== id)}
  }
  // The account a copied login belongs to, so Claude Code does not ask to sign in again.
  if (ctx.authType === 'credentials-file' && userState.oauthAccount && !state.oauthAccount) state.oauthAccount = userState.oauthAccount
  const projects = {...(state.projects ?? {})}
  // Claude Code looks the folder up by the path it runs in; the real path too, should a symlink
  // lead there.
  for (const dir of new Set([ctx.workdir, realWorkdir ?? ctx.workdir])) {
    projects[dir] = {
      allowedTools: [],
      mcpServers: {},
      ...(projects[dir] ?? {}),
      hasTrustDialogAccepted: true,
      hasCompletedProjectOnboarding: true,
      projectOnboardingSeenCount: Math.max(Number(projects[dir]?.projectOnboardingSeenCount) || 0, 1),
      hasClaudeMdExternalIncludesApproved: projects[dir]?.hasClaudeMdExternalIncludesApproved ?? false,
    }
  }
  state.projects = projects
  return state
}

/**
 * Whether a hook entry is one svc wrote: its command ends with `hook claude <event>`, whatever
 * the path of svc was then (an upgraded or moved svc replaces its old entry, never adds one).
 */
const isOurs = (hook: any, tail: string) => typeof hook?.command === 'string' && hook.command.endsWith(tail)

/** Quotes one argv element for the shell Claude Code runs a hook command with. */
export const shellQuote = (s: string) => (/^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`)

/**
 * The PermissionRequest hook: it holds the request as an approval on the Hub until someone
 * decides (approval-client.ts), so its timeout is the approval's wait plus a margin (Claude Code
 * kills a hook at its timeout; the hook gives up first and its approval expires). Claude Code
 * shows its own dialog meanwhile: whichever answers first wins.
 */
export function permissionHookGroup(command: string, waitSeconds: number): Record<string, unknown> {
  return {matcher: '', hooks: [{type: 'command', command, timeout: waitSeconds + HOOK_TIMEOUT_MARGIN_S}]}
}

/**
 * The Notification types svc's hook runs for (Claude Code matches a Notification hook's matcher
 * against `notification_type`; a payload without one runs every hook). Only the elicitation
 * dialog says something no other hook does: a permission prompt's notification comes after the
 * PermissionRequest hook, which already reported the agent waiting (and holds its approval), and
 * the other types (idle reminders, auth) report nothing (claude.ts). Each hook run is a Node
 * process Claude Code starts in the agent's CPU share (~75 ms of CPU), and a permission prompt's
 * can still be running when the decision comes in (once in 30 decisions of the approvals bench:
 * that Bash call's shell spawned 1 ms after the hook ended, 4.7 s after the tool was dispatched;
 * docs/benchmarks.md "Approvals").
 */
export const CLAUDE_NOTIFICATION_MATCHER = 'elicitation_dialog'

/** `~/.claude/settings.json`: svc's hooks (replacing earlier ones of svc), the user's kept. */
export function claudeSettings(existing: Record<string, any>, hookCommand: string[], approvalWait = 600): Record<string, any> {
  const settings: Record<string, any> = {...existing}
  // A bypass-permissions session (opted into with `--dangerously-skip-permissions` in the harness
  // config's args) would otherwise stop at a confirmation dialog; the flag itself stays opt-in.
  settings.skipDangerousModePermissionPrompt = true
  // svc's own MCP tools run without a permission prompt: the Hub's permissions and budgets bound them.
  const allow: unknown[] = Array.isArray(settings.permissions?.allow) ? settings.permissions.allow : []
  settings.permissions = {...(settings.permissions ?? {}), allow: allow.includes(`mcp__${SVC_MCP_NAME}`) ? allow : [...allow, `mcp__${SVC_MCP_NAME}`]}
  const hooks: Record<string, any[]> = {...(settings.hooks ?? {})}
  const marker = hookCommand.slice(-2).map(shellQuote).join(' ')
  // svc's entries go from every event, also one svc no longer listens to (an older svc's).
  for (const event of Object.keys(hooks)) {
    const kept = (Array.isArray(hooks[event]) ? hooks[event] : [])
      .map((group: any) => ({...group, hooks: (group?.hooks ?? []).filter((h: any) => !isOurs(h, ` ${marker} ${event}`))}))
      .filter((group: any) => group.hooks.length > 0)
    if (kept.length) hooks[event] = kept
    else delete hooks[event]
  }
  for (const event of CLAUDE_HOOK_EVENTS) {
    const command = [...hookCommand, event].map(shellQuote).join(' ')
    const group = event === 'PermissionRequest' ? permissionHookGroup(command, approvalWait) : {matcher: event === 'Notification' ? CLAUDE_NOTIFICATION_MATCHER : '', hooks: [{type: 'command', command, timeout: 30}]}
    hooks[event] = [...(hooks[event] ?? []), group]
  }
  settings.hooks = hooks
  return settings
}

/** Lays out the agent's HOME for Claude Code (idempotent; runs on every start). */
export async function prepareClaudeHome(ctx: LaunchContext): Promise<void> {
  const statePath = join(ctx.home, '.claude.json')
  const settingsPath = join(ctx.home, '.claude', 'settings.json')
  let userState: Record<string, any> = {}
  if (ctx.authType === 'credentials-file') {
    userState = await readJsonObject(join(ctx.userHome, '.claude.json'))
  }
  const realWorkdir = await realpath(ctx.workdir).catch(() => undefined)
  await writeJsonFile(statePath, claudeState(await readJsonObject(statePath), ctx, userState, realWorkdir))
  // The tool-call hooks go over HTTP to a loopback Hub, with no process each (claude-http-hooks.ts).
  await writeJsonFile(settingsPath, claudeHttpHookSettings(claudeSettings(await readJsonObject(settingsPath), ctx.hookCommand, approvalWaitSeconds(ctx.env)), ctx.env))
}
