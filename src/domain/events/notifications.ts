import {createHash} from 'node:crypto'
import {DEFAULT_NOTIFY_EVENTS} from '../../api/notify-states.js'
import type {AgentEventRecord, DeliveryRecord} from '../../store/repositories/agent-events.js'
import type {Deps} from '../deps.js'
import {iso} from '../shared/clock.js'
import {agentEventOf, approvalRequestedOf, type AgentFeed} from './agent-feed.js'
import {postJson, signatureOf} from './webhook-post.js'
import {checkLiteral, guardedLookup, PrivateTargetError, systemResolver, type Resolver} from './webhook-guard.js'

/** A channel of `server.notification_channels` (validated by the settings schema). */
export interface NotificationChannel {
  type: 'webhook'
  url: string
  events?: string[]
  projects?: string[]
  secret?: string
  /** Deliver to loopback, link-local and private addresses too (refused by default). */
  allow_private?: boolean
}

export interface NotifierOptions {
  /** The channels as configured now (followed on every settings change). */
  channels: () => NotificationChannel[]
  /** `{name, url}` of this Hub, as the payload's `hub`. */
  hub: () => {name: string; url: string}
  /** How long one delivery is retried before it is marked failed (default 10 min). */
  retryForMs?: number
  /** How often due deliveries are looked for (default 500 ms). */
  tickMs?: number
  /** How target names are resolved (default the system resolver). */
  resolve?: Resolver
}

/** The webhook channels of a settings tree (`server.notification_channels`; the schema checked them). */
export function channelsOf(tree: unknown): NotificationChannel[] {
  const list = (tree as {server?: {notification_channels?: unknown}})?.server?.notification_channels
  if (!Array.isArray(list)) return []
  return list.filter((c): c is NotificationChannel => !!c && typeof c === 'object' && (c as {type?: unknown}).type === 'webhook' && typeof (c as {url?: unknown}).url === 'string')
}

/**
 * A channel's identity in the outbox: its URL, what it listens to and whether it may reach
 * private addresses, never its secret. A delivery queued before `allow_private` changed is thus
 * sent under the rule it was queued with, or failed as of a removed channel.
 */
export const channelKey = (c: NotificationChannel) => createHash('sha256').update(JSON.stringify([c.url, c.events ?? null, c.projects ?? null, ...(c.allow_private === true ? [true] : [])])).digest('hex').slice(0, 16)

/** Retry delay after `attempts` failed tries: 1 s, 2 s, 4 s ... at most 1 min. */
export const backoffMs = (attempts: number) => Math.min(1000 * 2 ** Math.max(0, attempts - 1), 60_000)

/**
 * The states an event entered: a harness's failure first (`harness_error`: a running agent's
 * error set or changed), then the new activity, then the new phase.
 */
export function enteredStates(e: AgentEventRecord): string[] {
  const out: string[] = []
  if (e.phase === 'running' && e.error && e.error !== e.prevError) out.push('harness_error')
  if (e.activity && e.activity !== e.prevActivity) out.push(e.activity)
  if (e.phase !== e.prevPhase) out.push(e.phase)
  return out
}

const WORDS: Record<string, string> = {
  waiting_for_input: 'needs your input',
  idle: 'is idle, waiting for the next message',
  completed: 'completed its task',
  limits_exceeded: 'was stopped: a limit was exceeded',
  offline: 'is offline: its broker is not connected',
  error: 'failed',
  stopped: 'stopped',
  harness_error: 'hit an error',
}

/** Slack-compatible text (mrkdwn; a link to the agent's page when the Hub has a public URL). */
export function textOf(event: string, agent: {id: string; name: string; detail: string; error?: string | null}, hubUrl: string): string {
  const name = hubUrl ? `<${hubUrl.replace(/\/$/, '')}/agents/${agent.id}|${agent.name}>` : agent.name
  const said = event === 'harness_error' && agent.error ? agent.error : agent.detail
  const detail = said ? `: ${said.slice(0, 300)}` : ''
  return `Agent *${name}* ${WORDS[event] ?? `is now ${event}`}${detail}`
}

/**
 * Webhook notifications. Every replica reads every agent event from its feed and enqueues a
 * delivery per matching channel into the outbox (`notification_deliveries`), keyed by
 * (event, channel), so the rows of all replicas collapse into one. Any replica's worker then
 * claims due rows with a conditional update: a delivery is sent by exactly one replica at a time,
 * retried with backoff until `retryForMs` has passed, then marked failed (admin status shows it).
 * Nothing here runs on the status report's path. A target on a loopback, link-local or private
 * address is refused at every send unless its channel sets `allow_private` (a failed attempt,
 * retried like any other: the resolver's answer may change).
 */
export function createNotifier(deps: Deps, feed: AgentFeed, o: NotifierOptions) {
  const {store, logger} = deps
  const retryForMs = o.retryForMs ?? 10 * 60_000
  const tickMs = o.tickMs ?? 500
  const now = () => deps.clock.now().getTime()
  let running: Promise<void> | null = null
  let timer: NodeJS.Timeout | null = null
  let unsubscribe: (() => void) | null = null
  let lastPrune = 0

  async function enqueue(e: AgentEventRecord): Promise<void> {
    const channels = o.channels()
    if (!channels.length) return
    if (e.approval) return enqueueApproval(e, channels)
    const entered = enteredStates(e)
    if (!entered.length) return
    const agent = agentEventOf(e)
    for (const c of channels) {
      if (c.type !== 'webhook' || (c.projects?.length && !c.projects.includes(e.projectId))) continue
      const wanted = c.events?.length ? c.events : DEFAULT_NOTIFY_EVENTS
      const event = entered.find((s) => (wanted as readonly string[]).includes(s))
      if (!event) continue
      const hub = o.hub()
      const body = JSON.stringify({
        event,
        agent: {id: agent.id, name: agent.name, projectId: agent.projectId, phase: agent.phase, activity: agent.activity, detail: agent.detail, error: e.error},
        hub,
        at: e.at,
        text: textOf(event, {...agent, error: e.error}, hub.url),
      })
      await store.agentEvents.enqueue({eventSeq: e.seq, channel: channelKey(c), url: c.url, event, agentId: e.agentId, body, now: iso(new Date(now()))})
    }
    kick()
  }

  /** An `approval_requested` row: sent to the channels that list that event (never by default). */
  async function enqueueApproval(e: AgentEventRecord, channels: NotificationChannel[]): Promise<void> {
    const hub = o.hub()
    const a = e.approval!
    for (const c of channels) {
      if (c.type !== 'webhook' || (c.projects?.length && !c.projects.includes(e.projectId))) continue
      if (!c.events?.includes('approval_requested')) continue
      const payload = approvalRequestedOf(e, hub)
      const text = `${textOf('waiting_for_input', {id: e.agentId, name: e.name, detail: ''}, hub.url)}: may it run ${a.tool}${a.summary ? ` \`${a.summary.slice(0, 300)}\`` : ''}?`
      const body = JSON.stringify({...payload, agent: {id: e.agentId, name: e.name, projectId: e.projectId, phase: e.phase, activity: payload.agent.activity, detail: e.detail, error: e.error}, text})
      await store.agentEvents.enqueue({eventSeq: e.seq, channel: channelKey(c), url: c.url, event: 'approval_requested', agentId: e.agentId, body, now: iso(new Date(now()))})
    }
    kick()
  }

  async function send(d: DeliveryRecord): Promise<void> {
    const channel = o.channels().find((c) => channelKey(c) === d.channel)
    const t = now()
    if (!channel) {
      await store.agentEvents.finish(d.id, {status: 'failed', error: 'the channel was removed from server.notification_channels'}, iso(new Date(t)))
      return
    }
    const headers: Record<string, string> = {'x-svc-event': d.event, 'x-svc-delivery': d.id}
    if (channel.secret) headers['x-svc-signature'] = signatureOf(channel.secret, d.body)
    let error: string
    let refused = false
    try {
      // Checked at every send, not only when saved: the settings may predate the rule, and a
      // name may resolve elsewhere now (webhook-guard.ts pins the connection to what it checked).
      const allowPrivate = channel.allow_private === true
      checkLiteral(d.url, allowPrivate)
      const res = await postJson(d.url, d.body, headers, 10_000, guardedLookup(allowPrivate, o.resolve ?? systemResolver))
      if (res.status >= 200 && res.status < 300) {
        await store.agentEvents.finish(d.id, {status: 'delivered', error: null}, iso(new Date(now())))
        return
      }
      error = `HTTP ${res.status}${res.text ? `: ${res.text.slice(0, 200)}` : ''}`
    } catch (err) {
      error = (err as Error).message
      // A refused target is the channel's settings, not a passing failure: no retries.
      if (err instanceof PrivateTargetError) refused = true
    }
    const after = now()
    const next = after + backoffMs(d.attempts)
    const giveUp = refused || next - Date.parse(d.createdAt) > retryForMs
    if (giveUp) logger.warn({delivery: d.id, url: d.url, attempts: d.attempts, error}, 'webhook delivery failed for good')
    await store.agentEvents.finish(d.id, giveUp ? {status: 'failed', error} : {status: 'pending', error, nextAttemptAt: iso(new Date(next))}, iso(new Date(after)))
  }

  async function tick(): Promise<void> {
    const t = now()
    // A claim outlives any one POST (10 s timeout); a replica that died mid-send frees it then.
    const claimed = await store.agentEvents.claimDue(iso(new Date(t)), iso(new Date(t + 30_000)))
    await Promise.all(claimed.map((d) => send(d).catch((err) => logger.warn({err, delivery: d.id}, 'webhook delivery bookkeeping failed'))))
    if (t - lastPrune > 3600_000) {
      lastPrune = t
      await store.agentEvents.pruneDeliveries(iso(new Date(t - 7 * 24 * 3600_000)))
    }
  }

  function kick(): void {
    if (running) return
    running = tick()
      .catch((err) => logger.warn({err}, 'webhook deliveries failed'))
      .finally(() => (running = null))
  }

  return {
    start(): void {
      unsubscribe = feed.subscribe((e) => void enqueue(e).catch((err) => logger.warn({err, seq: e.seq}, 'queueing a webhook delivery failed')))
      timer = setInterval(kick, tickMs)
      timer.unref()
    },
    /** For admin status: counts by status and the latest problems. */
    async status(): Promise<{channels: number; deliveries: Record<string, number>; problems: Array<Omit<DeliveryRecord, 'body' | 'channel'>>}> {
      const problems = await store.agentEvents.recentProblems()
      return {
        channels: o.channels().length,
        deliveries: await store.agentEvents.deliveryCounts(),
        problems: problems.map(({body: _b, channel: _c, ...rest}) => rest),
      }
    },
    async close(): Promise<void> {
      unsubscribe?.()
      if (timer) clearInterval(timer)
      await running
    },
  }
}

export type Notifier = ReturnType<typeof createNotifier>
