/**
 * Reports a harness's HTTP hooks post straight to the Hub (Claude Code's tool-call hooks:
 * broker/harnesses/claude-http-hooks.ts). The body is the harness's own hook input; the Hub maps
 * it with the harness module, exactly as `svc hook` maps it in the agent's sandbox, and takes the
 * result as the agent's status report (liveness checked when written, as for `/status`).
 *
 * The credential is the agent's token as its harness was started with it: Claude Code fills the
 * header from `SVC_AUTH_TOKEN` in its environment, which a token refresh cannot change. So here
 * a token is taken when it is the agent's own (the agent named in the path) and not revoked,
 * even past its expiry: what it can do is bounded to reporting that agent's activity while the
 * agent is live, and stopping or deleting the agent revokes it. It is read on every request
 * (one indexed read), so a revocation is honoured at once on every replica.
 */
import {AppError} from '../../api/app-error.js'
import {harnessModule} from '../../broker/harnesses/registry.js'
import {CLAUDE_HTTP_HOOK_EVENTS} from '../../broker/harnesses/claude-http-hooks.js'
import type {CallContext} from '../authz/context.js'
import type {Deps} from '../deps.js'
import {hashSecret, TOKEN_PREFIX} from '../shared/secrets.js'
import type {AgentsService} from './agents-service.js'

/** Harnesses whose HTTP hooks the Hub maps, and the events it takes from each. */
const HTTP_HOOK_EVENTS: Record<string, readonly string[]> = {claude: CLAUDE_HTTP_HOOK_EVENTS}

const refused = () => new AppError('unauthorized', 'a hook report needs the token of the agent it reports on')

export function createHookReports(deps: Deps, agents: AgentsService) {
  return {
    /** The agent `agentId` as the caller, from its own (possibly expired, never revoked) token. */
    async authenticate(secret: string | null, agentId: string, requestId: string): Promise<CallContext> {
      if (!secret || !secret.startsWith(TOKEN_PREFIX.agent)) throw refused()
      const row = await deps.store.agents.tokenByHash(hashSecret(secret))
      if (!row || row.revokedAt || row.agentId !== agentId) throw refused()
      const agent = await deps.store.agents.get(row.agentId)
      if (!agent || agent.deletedAt) throw refused()
      return {principal: {kind: 'agent', id: agent.id, projectId: agent.projectId}, credentialKind: 'agent', scopes: new Set(row.scopes), requestId}
    },

    /** Maps one hook input of `harness` and reports it as the agent's status. */
    async report(ctx: CallContext, agentId: string, harness: string, input: unknown): Promise<void> {
      const events = HTTP_HOOK_EVENTS[harness]
      const mod = harnessModule(harness)
      if (!events || !mod) throw new AppError('not_found', `no HTTP hooks for harness ${JSON.stringify(harness)}`)
      const event = input && typeof input === 'object' ? (input as Record<string, unknown>).hook_event_name : undefined
      if (typeof event !== 'string' || !events.includes(event)) {
        throw new AppError('invalid_request', `hook_event_name must be one of ${events.join(', ')} (the others run as commands in the agent's sandbox)`, {field: 'body.hook_event_name'})
      }
      const mapped = mod.onHook(event, input)
      if (!mapped) return
      // The same fields `svc hook` sends for these events: activity and detail (usage, turns and
      // failures come from the command hooks of the turn's end).
      await agents.reportStatus(ctx, agentId, {activity: mapped.activity, detail: mapped.detail, heartbeat: true})
    },
  }
}

export type HookReports = ReturnType<typeof createHookReports>
