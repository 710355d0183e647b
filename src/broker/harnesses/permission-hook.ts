/**
 * What a harness's permission hook asks the Hub, and how its answer goes back to the harness.
 * Claude Code and Codex share one protocol: a `PermissionRequest` hook that prints
 * `{hookSpecificOutput: {hookEventName: "PermissionRequest", decision: {behavior, message?}}}`
 * (allow, or deny with a message the model reads as the tool's error); printing nothing leaves
 * the harness to its own prompt.
 */

/** One permission request as the Hub holds it (`POST /agents/:id/approvals`). */
export interface PermissionAsk {
  tool: string
  /** What a person judges: for a shell tool the command itself. */
  summary: string
  input: unknown
}

/** A decision the hook passes back to its harness. */
export interface PermissionVerdict {
  behavior: 'allow' | 'deny'
  /** On deny: why, for the model (the tool's error). */
  message?: string
}

/** The deny message the model reads: the reason given, else who refused. */
export function denyMessage(reason: string | null, by: string): string {
  return reason ? `Denied by ${by}: ${reason}` : `Denied by ${by}.`
}

/** Claude Code's and Codex's PermissionRequest answer on stdout. */
export function permissionRequestOutput(v: PermissionVerdict): string {
  const decision = v.behavior === 'allow' ? {behavior: 'allow'} : {behavior: 'deny', message: v.message ?? 'Denied.'}
  return JSON.stringify({hookSpecificOutput: {hookEventName: 'PermissionRequest', decision}}) + '\n'
}

/** How long a hook waits for a decision (seconds): `SVC_APPROVAL_WAIT_SECONDS` of the harness's environment, else 10 minutes. */
export function approvalWaitSeconds(env: Record<string, string | undefined>): number {
  const n = Number(env.SVC_APPROVAL_WAIT_SECONDS)
  return Number.isInteger(n) && n >= 1 && n <= 86_400 ? n : 600
}

/** A hook is killed by its harness after its timeout: it gives up this much before, and the approval expires on the Hub. */
export const HOOK_TIMEOUT_MARGIN_S = 30

/**
 * How long the hook waits for the Hub to answer its request (`POST /agents/:id/approvals`). A
 * hook that gives up while the Hub still takes the request leaves a pending approval nobody waits
 * on: a person's allow then runs nothing. Measured (approvals bench, 10 Claude Code agents at
 * load ~58 on 2 cores): the Hub answered after more than 10 s, the old bound. The hook is there
 * to wait, so it waits long, within the time its harness gives it.
 */
export const askTimeoutMs = (waitSeconds: number) => Math.min(60, waitSeconds) * 1000

/**
 * A `PermissionRequest` payload (Claude Code's and Codex's: `tool_name`, `tool_input`) as a
 * request; null for any other event. `summarize` is the module's own summary of a tool's input.
 */
export function permissionAskOf(event: string, payload: unknown, summarize: (tool: string, input: unknown) => string): PermissionAsk | null {
  if (event !== 'PermissionRequest') return null
  const p = (payload && typeof payload === 'object' ? payload : {}) as {tool_name?: unknown; tool_input?: unknown}
  const tool = typeof p.tool_name === 'string' && p.tool_name ? p.tool_name : 'tool'
  return {tool, summary: summarize(tool, p.tool_input), input: p.tool_input ?? null}
}
