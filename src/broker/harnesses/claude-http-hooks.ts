/**
 * Claude Code's tool-call hooks as HTTP hooks (`type: "http"`, Claude Code 2.1): Claude Code
 * POSTs its hook input straight to the Hub, and no process starts per tool call. A command hook
 * (`svc hook claude <event>`) is a Node process Claude Code waits for before and after every
 * tool: hundreds of milliseconds on a loaded machine, most of an agent's reporting latency.
 *
 * Only the tool-call events go over HTTP (CLAUDE_HTTP_HOOK_EVENTS): each is superseded by the
 * next report within moments, so one the Hub does not take costs nothing lasting. The others
 * stay commands, because they need the agent's sandbox or must not be lost: the turn's start
 * and end (`UserPromptSubmit` sends reports kept from an earlier failed delivery before the
 * turn's own; `Stop` reads usage from the transcript and counts the turn, kept when the Hub is
 * away: status-delivery.ts), `Notification` (waiting for the person) and `PermissionRequest`
 * (it waits for an approval).
 *
 * Only towards a Hub on loopback: Claude Code refuses HTTP hooks to private and link-local
 * addresses (its SSRF guard lets loopback through), and loopback is what a sandbox with an
 * isolated network reaches the Hub through (egress-plan.ts). Elsewhere every event stays a
 * command hook.
 *
 * The credential is the agent's own token, put in the header by Claude Code from
 * `SVC_AUTH_TOKEN` (the only variable it may interpolate): the Hub takes it for that agent's
 * reports only (domain/agents/hook-reports.ts).
 */

/** The events Claude Code reports over HTTP when the Hub is on loopback. */
export const CLAUDE_HTTP_HOOK_EVENTS: readonly string[] = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure']

/** The Hub's route for one agent's Claude Code HTTP hooks. */
export const claudeHookPath = (agentId: string) => `/api/v1/agents/${encodeURIComponent(agentId)}/hooks/claude`

/** An HTTP hook URL svc wrote, whatever the Hub's address was then. */
const OURS = /^https?:\/\/[^/]+\/api\/v1\/agents\/[^/]+\/hooks\/claude$/

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1'])

/** The URL of the agent's HTTP hooks, or null when they cannot be used (no loopback Hub, no agent). */
export function claudeHookUrl(env: Record<string, string | undefined>): string | null {
  if (!env.SVC_HUB_ENDPOINT || !env.SVC_AGENT_ID || !env.SVC_AUTH_TOKEN) return null
  let hub: URL
  try {
    hub = new URL(env.SVC_HUB_ENDPOINT)
  } catch {
    return null
  }
  if (hub.protocol !== 'http:' && hub.protocol !== 'https:') return null
  if (!LOOPBACK.has(hub.hostname) && !/^127\.\d+\.\d+\.\d+$/.test(hub.hostname)) return null
  return new URL(claudeHookPath(env.SVC_AGENT_ID), hub).toString()
}

/** One HTTP hook: the agent's token from its environment, nothing else interpolated. */
export function claudeHttpHook(url: string): Record<string, unknown> {
  return {type: 'http', url, headers: {Authorization: 'Bearer $SVC_AUTH_TOKEN'}, allowedEnvVars: ['SVC_AUTH_TOKEN'], timeout: 10}
}

const isOurHttp = (h: any) => h?.type === 'http' && typeof h.url === 'string' && OURS.test(h.url)
const isOurCommand = (h: any, event: string) => typeof h?.command === 'string' && h.command.endsWith(` hook claude ${event}`)

/**
 * `hooks` of `~/.claude/settings.json` as claudeSettings wrote them (a command hook of svc per
 * event), with the tool-call events' command hooks of svc replaced by HTTP hooks to `url`; with
 * `url` null, only svc's HTTP hooks of an earlier start removed. The user's hooks are kept.
 */
export function withClaudeHttpHooks(hooks: Record<string, any[]>, url: string | null): Record<string, any[]> {
  const out: Record<string, any[]> = {}
  for (const [event, groups] of Object.entries(hooks)) {
    const http = url !== null && CLAUDE_HTTP_HOOK_EVENTS.includes(event)
    const kept = (Array.isArray(groups) ? groups : [])
      .map((g: any) => ({...g, hooks: (Array.isArray(g?.hooks) ? g.hooks : []).filter((h: any) => !isOurHttp(h) && !(http && isOurCommand(h, event)))}))
      .filter((g: any) => g.hooks.length > 0)
    if (kept.length) out[event] = kept
  }
  if (url !== null) for (const event of CLAUDE_HTTP_HOOK_EVENTS) out[event] = [...(out[event] ?? []), {matcher: '', hooks: [claudeHttpHook(url)]}]
  return out
}

/**
 * Settings with svc's HTTP hooks in place (see above). A settings file that restricts HTTP hook
 * URLs (`allowedHttpHookUrls`) gets the Hub's URL added, or Claude Code would block it.
 */
export function claudeHttpHookSettings(settings: Record<string, any>, env: Record<string, string | undefined>): Record<string, any> {
  const url = claudeHookUrl(env)
  const out: Record<string, any> = {...settings, hooks: withClaudeHttpHooks(settings.hooks ?? {}, url)}
  if (url && Array.isArray(settings.allowedHttpHookUrls)) {
    const allowed = settings.allowedHttpHookUrls.filter((u: unknown) => !(typeof u === 'string' && OURS.test(u)))
    out.allowedHttpHookUrls = [...allowed, url]
  }
  return out
}
