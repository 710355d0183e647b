/**
 * What a harness module is: the data and the few functions that differ between coding agents
 * (Claude Code, Codex, Gemini CLI, OpenCode, a plain shell). The broker does everything else
 * the same way for all of them: workspace, HOME, environment, tmux, status path.
 */
import type {PermissionAsk, PermissionVerdict} from './permission-hook.js'

/** Activities a harness reports (the spec's running-phase activities a hook can know). */
export type HookActivity = 'idle' | 'thinking' | 'executing' | 'waiting_for_input' | 'completed'

/**
 * Cumulative usage of one harness session (totals so far, not deltas), so a repeated or lost
 * report never double-counts: the Hub keeps the latest totals per `sessionId` and sums sessions.
 */
export interface SessionUsage {
  sessionId: string
  inputTokens: number
  outputTokens: number
  cacheReadTokens?: number
  cacheWriteTokens?: number
  modelCalls: number
  /** US dollars, when the harness says (else the Hub prices tokens by model). */
  costUsd?: number
  model?: string
}

/** What one hook event becomes: a status report to the Hub (`POST /agents/:id/status`). */
export interface HookReport {
  activity?: HookActivity
  /** `executing`: the tool's name first, then a short summary (`Bash: npm test`). */
  detail?: string
  /**
   * The harness's API, auth or network failure (the agent's `error`: shown red, a `harness_error`
   * webhook); null clears it. Left out, the Hub clears it with any activity (a new turn, a tool,
   * a turn that ended well), so a module sets it only to report or keep a failure.
   */
  error?: string | null
  /** The turn ended (counted for `max_turns`); sent with `activity: 'idle'`. */
  turnEnded?: boolean
  usage?: SessionUsage
}

/** Everything a module needs to lay out a harness's first run and build its command line. */
export interface LaunchContext {
  agentId: string
  agentName: string
  /** The agent's own HOME: the harness's config and credentials go here, never in the work tree. */
  home: string
  /**
   * The agent's work tree (its working directory), whose `.git` names its own repository; an
   * empty directory when the project has neither a checkout on this broker nor a remote.
   */
  workdir: string
  /** First prompt, when the agent was created with a task and this is not a resume. */
  task?: string
  model?: string
  /** `off`, `low`, `medium`, `high` (setting `default_thinking_level`; its `none` arrives as `off`); each module maps it. */
  thinkingLevel?: string
  /** True when the agent ran before in this workspace: continue its last session. */
  resume: boolean
  /** The environment the harness will run with (secrets included): read it, never write it to disk. */
  env: Record<string, string>
  /** The auth type chosen (`auth_selected_type`, else the module's default). */
  authType: string
  /**
   * argv that runs `svc hook <harness>`; a module appends the event name and writes the whole
   * command into the harness's hook configuration (absolute paths, no shell needed).
   */
  hookCommand: string[]
  /** The broker user's own HOME, for `credentials-file` auth (copy the user's login in). */
  userHome: string
}

/** One way of authenticating a harness (`auth_selected_type`). */
export interface AuthType {
  /** Environment variables this auth needs (from the harness env, else project/user secrets). */
  secrets: string[]
  /**
   * For `credentials-file`: the user's login file (relative to HOME), copied to the same place in
   * the agent's HOME before `prepare` (prepare-home.ts).
   */
  credentialsFile?: string
  /** How a user signs in to make that file, for the error when it is missing (default: run the executable). */
  signIn?: string
  description: string
}

export interface HarnessModule {
  /** The harness type (`harness` of a harness config). */
  type: string
  displayName: string
  /** Executable looked up on the broker's PATH. */
  executable: string
  /** How to install it, for the error when it is missing. */
  install: string
  auth: {default: string; types: Record<string, AuthType>}
  /** Arguments after the executable (model, thinking, resume, first prompt when `taskInArgs`). */
  args(ctx: LaunchContext): string[]
  /**
   * False when the task cannot go on the command line: the broker pastes it into the terminal
   * once the harness runs (as its first prompt).
   */
  taskInArgs: boolean
  /** Extra environment for the harness process (never secrets: those come from the Hub). */
  env?(ctx: LaunchContext): Record<string, string>
  /**
   * Writes the harness's config into `ctx.home` so its first run never stops at a dialog
   * (onboarding, key approval, folder trust) and its hooks call `ctx.hookCommand`. Idempotent:
   * it runs again on every start.
   */
  prepare(ctx: LaunchContext): Promise<void>
  /**
   * Maps one hook event (the event name the module put on the hook's command line, and the JSON
   * the harness wrote on the hook's stdin, or null) to a report; null to report nothing. Pure and
   * fast: it runs on the hot path of every tool call.
   */
  onHook(event: string, payload: unknown): HookReport | null
  /**
   * What the hook prints on stdout for this event, when the harness reads an answer there
   * (default nothing).
   */
  hookOutput?(event: string, payload: unknown): string | undefined
  /**
   * The permission request this event is, when the harness waits on the hook for a decision
   * (Claude Code's and Codex's `PermissionRequest`); null for any other event. The hook then asks
   * the Hub for an approval and waits for it (approval-client.ts) instead of reporting the event.
   */
  permissionAsk?(event: string, payload: unknown): PermissionAsk | null
  /** What the hook prints to hand a decision back to the harness. */
  permissionAnswer?(event: string, verdict: PermissionVerdict): string
  /**
   * What the hook prints as soon as the Hub holds the request pending, before it waits, for a
   * harness that reads the hook's output as it comes (OpenCode's plugin holds its other hooks
   * back until then). Default nothing.
   */
  permissionPending?(event: string): string
  /**
   * Session usage totals for an event that ends a turn, when they take I/O to compute (Claude
   * Code's transcript file named in the Stop payload). Awaited by the hook entry after `onHook`,
   * only when `onHook` returned a report; keep it cheap and bounded.
   */
  usageOf?(event: string, payload: unknown): Promise<SessionUsage | undefined>
  /**
   * The failure a turn ended on, when only I/O tells (Gemini CLI's session file): awaited by the
   * hook entry after `onHook` returned a report, and reported as its `detail` and `error`.
   * Keep it cheap and bounded.
   */
  errorOf?(event: string, payload: unknown): Promise<string | undefined>
}
