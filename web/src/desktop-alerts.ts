import {api} from './api.js'
import {followAgentEvents, type AgentEvent} from './agent-events.js'

const seen = new Map<string, string | null>()
let me: Promise<string | null> | null = null
let stop: (() => void) | null = null

/** Whether this browser can show desktop notifications at all. */
export const notificationsSupported = () => typeof Notification !== 'undefined'

/**
 * Desktop notifications (with the user's permission): when an agent the signed-in user created
 * starts waiting for input, one Notification per such transition, tagged with the agent so a
 * newer one replaces an older. Other users' agents and other states never alert.
 */
export function startDesktopAlerts(): () => void {
  if (stop) return stop
  me ??= api<{principal: {kind: string; id: string}}>('GET', '/api/v1/auth/me').then(
    (r) => (r.principal.kind === 'user' ? r.principal.id : null),
    () => null,
  )
  const owners = new Map<string, Promise<string | null>>()
  const ownerOf = (id: string) => {
    let o = owners.get(id)
    if (!o) {
      o = api<{agent: {createdBy: {kind: string; id: string}}}>('GET', `/api/v1/agents/${encodeURIComponent(id)}`).then(
        (r) => (r.agent.createdBy.kind === 'user' ? r.agent.createdBy.id : null),
        () => null,
      )
      owners.set(id, o)
    }
    return o
  }
  const onEvent = async (e: AgentEvent) => {
    const before = seen.get(e.id)
    seen.set(e.id, e.activity)
    if (e.activity !== 'waiting_for_input' || before === 'waiting_for_input') return
    if (!notificationsSupported() || Notification.permission !== 'granted') return
    const [user, owner] = await Promise.all([me, ownerOf(e.id)])
    if (!user || owner !== user) return
    const n = new Notification(`${e.name} needs you`, {body: e.detail || 'The agent is waiting for your input.', tag: `svc-agent-${e.id}`})
    n.onclick = () => {
      window.focus()
      // A permission request is answered in the approvals inbox; other input at the agent's page.
      location.hash = e.detail?.startsWith('Permission:') ? '#/approvals' : `#/agents/${encodeURIComponent(e.id)}`
    }
  }
  const off = followAgentEvents((e) => void onEvent(e))
  stop = () => {
    off()
    stop = null
  }
  return stop
}
