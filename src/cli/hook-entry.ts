/**
 * `svc hook <harness> <event> [payload]`: what a harness's hooks run. It is on the hot path of
 * every tool call (Claude Code waits for a PreToolUse hook before the tool runs), so it loads no
 * CLI framework: read the payload, map it with the harness module, POST one status report over
 * node:http, exit. It never fails the harness: every error is swallowed after a line on stderr,
 * and the exit code is always 0 (a non-zero hook exit can block a tool in some harnesses).
 */
import {appendFileSync} from 'node:fs'
import {harnessModule} from '../broker/harnesses/registry.js'
import type {HarnessModule, HookReport} from '../broker/harnesses/types.js'
import type {ApprovalDto} from '../api/approval.js'
import {askApproval} from '../broker/approval-client.js'
import {approvalWaitSeconds, denyMessage, type PermissionAsk} from '../broker/harnesses/permission-hook.js'
import {deliver, postReport} from '../broker/status-delivery.js'

/** A hook's payload is small; refuse to buffer a runaway stdin. */
const MAX_PAYLOAD = 4 * 1024 * 1024
/**
 * How long a report waits for the harness's usage before it goes without: a late transcript
 * (claude-transcript.ts waits for Claude Code to flush it) must not hold up the turn's `idle`.
 */
const USAGE_GRACE_MS = 150

function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return Promise.resolve('')
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    process.stdin.on('data', (c: Buffer) => {
      size += c.length
      if (size <= MAX_PAYLOAD) chunks.push(c)
    })
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    process.stdin.on('error', () => resolve(''))
  })
}

function parse(text: string): unknown {
  if (!text.trim()) return null
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

/**
 * With SVC_HOOK_TRACE=<file> in the harness's environment (a harness config's `env` puts it
 * there), each hook appends one JSON line to that file (a relative path is taken from the hook's
 * working directory, the agent's work tree, which a sandboxed agent can write): when its process
 * started, when it sent the report and when the Hub answered. It tells where a late status spends its time; the agents
 * benchmark measures visibility from `startedAt`. Best effort, like everything in a hook.
 */
function trace(env: NodeJS.ProcessEnv, line: Record<string, unknown>): void {
  if (!env.SVC_HOOK_TRACE) return
  try {
    appendFileSync(env.SVC_HOOK_TRACE, JSON.stringify({agentId: env.SVC_AGENT_ID, startedAt: Math.round(performance.timeOrigin), ...line}) + '\n')
  } catch {
    // a trace that cannot be written changes nothing for the harness
  }
}

const LATE = Symbol('late')
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())

/** Delivers a report (after any kept undelivered: status-delivery.ts), tracing each POST. */
async function send(env: NodeJS.ProcessEnv, harness: string, event: string, report: HookReport): Promise<void> {
  const status = await deliver(env, report, async (e, r) => {
    const sentAt = Date.now()
    const answered = await postReport(e, r)
    trace(env, {harness, event, activity: r.activity, sentAt, answeredAt: Date.now(), status: answered})
    return answered
  })
  if (typeof status === 'number' && status >= 400) process.stderr.write(`svc hook: the Hub answered ${status} to a status report\n`)
}

/** Who refused, as the model reads it. */
function refuser(a: ApprovalDto): string {
  const by = a.decidedBy
  if (by?.kind === 'rule') return `rule ${by.index} of svc's approvals.rules`
  if (by?.kind === 'agent') return 'the lead agent'
  return 'the user (through svc)'
}

/**
 * Asks the Hub for an approval and waits for its decision; prints the harness's answer for an
 * allow or a deny and nothing otherwise (answered at the terminal, expired: the harness's own
 * prompt decides). False when the Hub could not be asked.
 */
async function answerPermission(env: NodeJS.ProcessEnv, mod: HarnessModule, event: string, ask: PermissionAsk): Promise<boolean> {
  // A harness reading the hook's output as it comes learns that the Hub holds the request (OpenCode's plugin).
  const pending = () => {
    const line = mod.permissionPending?.(event)
    if (line) process.stdout.write(line)
  }
  const approval = await askApproval(env, ask, approvalWaitSeconds(env), (msg) => process.stderr.write(`svc hook: ${msg}\n`), pending)
  if (!approval) return false
  trace(env, {event, approval: approval.id, state: approval.state, answeredAt: Date.now()})
  if (approval.state === 'allowed') process.stdout.write(mod.permissionAnswer!(event, {behavior: 'allow'}))
  else if (approval.state === 'denied') process.stdout.write(mod.permissionAnswer!(event, {behavior: 'deny', message: denyMessage(approval.reason, refuser(approval))}))
  return true
}

export async function runHook(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const [type = '', event = '', inline] = argv
  try {
    const mod = harnessModule(type)
    if (!mod) {
      process.stderr.write(`svc hook: unknown harness ${JSON.stringify(type)}\n`)
      return
    }
    // Codex's notify passes its JSON as the last argument; the others write it on stdin.
    const payload = parse(inline !== undefined ? inline : await readStdin())
    const out = mod.hookOutput?.(event, payload)
    if (out) process.stdout.write(out)
    // A permission request waits here for its approval (the Hub shows the agent waiting); a Hub
    // that could not be asked leaves it to the harness's prompt, reported as before.
    const ask = mod.permissionAsk?.(event, payload)
    if (ask && mod.permissionAnswer && (await answerPermission(env, mod, event, ask))) return
    const mapped = mod.onHook(event, payload)
    if (!mapped) return
    // `thinking` and `idle` belong to no tool: unless the module says otherwise they clear the
    // last tool's detail (the Hub keeps a detail that a report leaves out).
    let report = mapped.detail === undefined && (mapped.activity === 'thinking' || mapped.activity === 'idle') ? {...mapped, detail: ''} : mapped
    // A turn that ended on an API, auth or network failure only the harness's files tell of.
    const failure = mod.errorOf ? await mod.errorOf(event, payload).catch(() => undefined) : undefined
    if (failure) report = {...report, detail: failure, error: failure}
    const usage = mod.usageOf ? mod.usageOf(event, payload).catch(() => undefined) : undefined
    const quick = usage && (await Promise.race([usage, sleep(USAGE_GRACE_MS).then(() => LATE)]))
    // Usage that is ready rides with the report; late usage follows it in a report of its own.
    await send(env, type, event, quick && typeof quick === 'object' ? {...report, usage: quick} : report)
    const late = quick === LATE ? await usage : undefined
    if (late) await send(env, type, event, {usage: late})
  } catch (err) {
    process.stderr.write(`svc hook: ${(err as Error).message}\n`)
  } finally {
    process.exitCode = 0
  }
}
