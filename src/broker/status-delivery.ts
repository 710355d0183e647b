/**
 * Delivering an agent's status reports to the Hub, and keeping those it could not deliver.
 *
 * A hook's report is its only one: when the Hub is restarting or unreachable it would be lost,
 * and the agent would show `thinking` long after its turn ended (a turn and its usage lost
 * too). So a report the Hub did not take (no answer, or 5xx) is kept in a file next to the
 * agent's token (`<agent home>/.svc/status-pending.json`), folded with any kept before it. The
 * next hook sends what is kept before its own report; the broker sends it when it (re)connects
 * and on its liveness tick, for the agent that reports nothing more (idle, waiting for its
 * person). A 4xx (token revoked, agent gone) is final: nothing is kept.
 */
import {randomBytes} from 'node:crypto'
import {lstatSync, renameSync, unlinkSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {NO_REPLICA_STATUSES, NOT_SENT_CODES} from '../api/replica-failover.js'
import {agentToken, hubEndpoints, hubPost, readSmallFile} from './hub-post.js'
import type {HookReport, SessionUsage} from './harnesses/types.js'

const POST_TIMEOUT_MS = 3000
/** Kept reports are small (a state, a count, a few sessions' usage): a bigger file is not theirs. */
const KEPT_MAX_BYTES = 1024 * 1024
/** Turns kept beyond this fold into it: a runaway count must not become a flood of reports. */
const MAX_KEPT_TURNS = 100

/** A report: what a hook maps, or what `svc status` says (which may name a phase too). */
export type StatusReport = HookReport & {phase?: string}

/** Reports not delivered yet, folded: the latest phase, activity and detail, turns ended, the latest usage of each session. */
export interface KeptReports {
  phase?: string
  activity?: HookReport['activity']
  detail?: string
  error?: string | null
  turns: number
  usage: SessionUsage[]
}

/**
 * What became of one POST: the HTTP status; `null` when it never reached the Hub (no
 * connection); `unanswered` when it was sent and no answer came (a timeout, a reset): the Hub
 * may have taken it.
 */
export type Answer = number | null | 'unanswered'

export type PostReport = (env: NodeJS.ProcessEnv, report: StatusReport) => Promise<Answer>


/**
 * POSTs one report; resolves what became of it. With several Hub URLs (a deployment's
 * replicas: hub-post.ts `hubEndpoints`) a report that did not reach one, or that a proxy
 * answered for a missing replica, goes to the next. One sent and unanswered goes to the next
 * too, but without its turn, as when it is kept: that replica may have counted it (an agent in
 * an isolated sandbox reaches a dead replica through a local forwarder that accepts and then
 * closes, so a gone replica looks unanswered there).
 */
export async function postReport(env: NodeJS.ProcessEnv, report: StatusReport): Promise<Answer> {
  const endpoints = hubEndpoints(env)
  const agentId = env.SVC_AGENT_ID
  const token = agentToken(env)
  if (!endpoints.length || !agentId || !token) return null
  let answer: Answer = null
  let body = report
  for (const endpoint of endpoints) {
    const url = new URL(`/api/v1/agents/${encodeURIComponent(agentId)}/status`, endpoint)
    try {
      const status = (await hubPost(url, token, JSON.stringify({...body, heartbeat: true}), POST_TIMEOUT_MS)).status
      if (!NO_REPLICA_STATUSES.has(status)) return status
      if (answer !== 'unanswered') answer = status
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      process.stderr.write(`svc hook: status report to ${endpoint} failed: ${(err as Error).message}\n`)
      if (!(code && NOT_SENT_CODES.has(code))) {
        answer = 'unanswered'
        body = {...body, turnEnded: undefined}
      }
    }
  }
  return answer
}

/** Where an agent's undelivered reports are kept: next to its token file. */
export function keptReportsFile(env: NodeJS.ProcessEnv): string | null {
  return env.SVC_AUTH_TOKEN_FILE ? join(dirname(env.SVC_AUTH_TOKEN_FILE), 'status-pending.json') : null
}

/**
 * True when the Hub did not take a report, or may not have: it is worth sending again. A 429 is
 * not taken either (the address is throttled: agents of one host share it, so another agent's bad
 * credentials can cause it), unlike the other 4xx, which would be answered the same again.
 */
const undelivered = (a: Answer) => a === null || a === 'unanswered' || a === 429 || a >= 500

/** `newer` folded onto `older`: later fields win, turns add up, usage keeps each session's latest. */
export function fold(older: KeptReports | null, newer: StatusReport | KeptReports): KeptReports {
  const kept = 'turns' in newer ? newer : {phase: newer.phase, activity: newer.activity, detail: newer.detail, error: newer.error, turns: newer.turnEnded ? 1 : 0, usage: newer.usage ? [newer.usage] : []}
  if (!older) return kept
  const usage = new Map(older.usage.map((u) => [u.sessionId, u]))
  for (const u of kept.usage) {
    usage.delete(u.sessionId)
    usage.set(u.sessionId, u)
  }
  return {
    phase: kept.phase ?? older.phase,
    activity: kept.activity ?? older.activity,
    detail: kept.detail ?? older.detail,
    error: kept.error !== undefined ? kept.error : older.error,
    turns: Math.min(MAX_KEPT_TURNS, older.turns + kept.turns),
    usage: [...usage.values()],
  }
}

/** Kept reports as the reports that deliver them: older sessions' usage, extra turns, then the latest state. */
export function reportsOf(kept: KeptReports): StatusReport[] {
  const out: StatusReport[] = kept.usage.slice(0, -1).map((usage) => ({usage}))
  for (let i = 1; i < kept.turns; i++) out.push({turnEnded: true})
  const last: StatusReport = {}
  if (kept.phase !== undefined) last.phase = kept.phase
  if (kept.activity !== undefined) last.activity = kept.activity
  if (kept.detail !== undefined) last.detail = kept.detail
  if (kept.error !== undefined) last.error = kept.error
  if (kept.turns > 0) last.turnEnded = true
  if (kept.usage.length) last.usage = kept.usage.at(-1)
  if (Object.keys(last).length) out.push(last)
  return out
}

/** Takes the kept reports out of their file (a rename first, so two takers never both get them). */
export function takeKept(file: string): KeptReports | null {
  if (lstatSync(dirname(file), {throwIfNoEntry: false})?.isDirectory() !== true) return null
  const claimed = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`
  try {
    renameSync(file, claimed)
  } catch {
    return null // none kept, or another process took them
  }
  try {
    // The agent writes this directory: what it planted here (a link, a FIFO, a huge file) is not read.
    const v = JSON.parse(readSmallFile(claimed, KEPT_MAX_BYTES) ?? 'null')
    return v && typeof v === 'object' && typeof v.turns === 'number' && Array.isArray(v.usage) ? v : null
  } catch {
    return null
  } finally {
    try {
      unlinkSync(claimed)
    } catch {
      // already gone
    }
  }
}

/** Keeps `reports` for later, after anything another process kept meanwhile (written atomically). */
function keep(file: string, reports: StatusReport[]): void {
  let kept: KeptReports | null = null
  for (const r of reports) kept = fold(kept, r)
  const meanwhile = takeKept(file)
  if (meanwhile) kept = fold(kept, meanwhile)
  if (!kept) return
  // The broker keeps them too, on the host, in a directory the agent writes: a new file of an
  // unguessable name, created exclusively (a link planted at the name is never written through),
  // and only in a real directory (not a link the agent put at `.svc`).
  if (lstatSync(dirname(file), {throwIfNoEntry: false})?.isDirectory() !== true) return
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  try {
    writeFileSync(tmp, JSON.stringify(kept), {mode: 0o600, flag: 'wx'})
    renameSync(tmp, file)
  } catch (err) {
    process.stderr.write(`svc hook: keeping an undelivered status report failed: ${(err as Error).message}\n`)
  }
}

/**
 * Sends reports in order; the first the Hub does not take is kept with those after it. One sent
 * but unanswered is kept without its turn: the Hub may have counted it, and a turn counted twice
 * could stop the agent at `max_turns` early (activity and usage are the same when sent twice).
 */
async function sendInOrder(env: NodeJS.ProcessEnv, file: string | null, reports: StatusReport[], post: PostReport): Promise<Answer> {
  let answer: Answer = null
  for (let i = 0; i < reports.length; i++) {
    answer = await post(env, reports[i])
    if (undelivered(answer)) {
      const first = answer === 'unanswered' ? {...reports[i], turnEnded: undefined} : reports[i]
      if (file) keep(file, [first, ...reports.slice(i + 1)])
      break
    }
  }
  return answer
}

/**
 * Sends `report`, after whatever was kept undelivered (folded in, so the Hub sees the latest
 * state last); keeps what the Hub did not take. Resolves what became of the last POST.
 */
export async function deliver(env: NodeJS.ProcessEnv, report: StatusReport, post: PostReport = postReport): Promise<Answer> {
  const file = keptReportsFile(env)
  const kept = file ? takeKept(file) : null
  return sendInOrder(env, file, kept ? reportsOf(fold(kept, report)) : [report], post)
}

/** The broker's part: sends an agent's kept reports, if any (kept again if the Hub still does not take them). */
export async function deliverKept(env: NodeJS.ProcessEnv, post: PostReport = postReport): Promise<void> {
  const file = keptReportsFile(env)
  const kept = file ? takeKept(file) : null
  if (kept) await sendInOrder(env, file, reportsOf(kept), post)
}

/**
 * The broker's courier: `deliverKept` for each of its agents, one pass at a time (against a Hub
 * that does not answer, each agent's try takes the POST's timeout; passes must not pile up).
 */
export function keptReportsCourier(envOf: (agentId: string) => NodeJS.ProcessEnv, onError: (agentId: string, err: Error) => void, post: PostReport = postReport) {
  let busy = false
  return async (agentIds: string[]): Promise<void> => {
    if (busy) return
    busy = true
    try {
      for (const id of agentIds) await deliverKept(envOf(id), post).catch((err) => onError(id, err as Error))
    } finally {
      busy = false
    }
  }
}
