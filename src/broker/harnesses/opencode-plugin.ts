/**
 * The OpenCode plugin svc writes into the agent's HOME (~/.config/opencode/plugin/svc-hooks.js).
 * OpenCode loads it in its own Bun runtime; it forwards the few events svc maps to
 * `[...hookCommand, <event>]` with the event's JSON on stdin, without making OpenCode wait for
 * the hook (the agent never blocks on svc). The hooks run one after another, in the order of the
 * events: run side by side, a turn's `busy` report could reach the Hub after its `idle` and leave
 * a finished agent showing `thinking`. It keeps each session's token totals itself, so the idle
 * event carries cumulative usage and the hook does no I/O, the error a turn stopped on
 * (`lastError`), and whether it ends a turn (`endsTurn`).
 *
 * A permission request (`permission.asked`) becomes an approval on the Hub: its hook asks and
 * waits for the decision outside that queue (a person may take minutes; the activity of the rest
 * goes on), prints `{"pending": true}` once the Hub holds it, then the reply, which the plugin
 * gives OpenCode through the SDK client OpenCode hands it (`replyCall` below). The TUI's dialog
 * stays up meanwhile: whichever answers first wins (OpenCode refuses the later reply as unknown);
 * an answer in the TUI ends the approval `answered` on the Hub through the `thinking` that
 * follows. A reply OpenCode did not take for another reason is reported as the agent's error
 * (`permission.reply_failed`, opencode.ts): the dialog still asks. See opencode.ts
 * (`permissionAskOf`).
 */
import {askTimeoutMs} from './permission-hook.js'

export const PLUGIN_FILE = 'svc-hooks.js'

/**
 * How long a permission hook holds back the hooks after it before the Hub holds its request: as
 * long as the hook waits for the Hub's answer (askTimeoutMs, at most 60 s at any wait), plus its
 * own start (a node process on a loaded machine). Shorter, a `thinking` after an answer in the TUI
 * could reach the Hub before the request and leave it pending for nobody.
 */
export const ASK_HOLD_MS = askTimeoutMs(86_400) + 15_000

export function pluginSource(hookCommand: string[]): string {
  return `// Written by svc on every start: changes here are overwritten.
import {spawn} from 'node:child_process'

const HOOK = ${JSON.stringify(hookCommand)}
const FORWARD = new Set(['session.status', 'session.idle', 'session.error', 'permission.updated', 'question.asked', 'question.replied', 'question.rejected'])
// sessionID -> messageID -> the assistant message's latest token counts and cost
const usage = new Map()
// Sub-agent sessions (task tool) have a parent: their idle is not the agent's turn ending.
const children = new Set()
// sessionID -> the last tool call: OpenCode asks permission after tool.execute.before, so an
// approval means that tool runs now.
const lastTool = new Map()
// A turn ends with the first session.idle after the session went busy: OpenCode repeats
// session.idle after an error, and the repeat is no turn of its own.
const busy = new Set()
// sessionID -> the error the session stopped on: the idle after it says so. OpenCode may recover
// by itself after an error (a prompt too long for the model is compacted and the turn goes on):
// once the session is busy again the error is forgotten.
const errors = new Map()

// The hooks in flight, one at a time: each starts when the one before has exited (or after
// HOOK_TIMEOUT_MS, so a hook that hangs cannot hold the rest back for good).
let queue = Promise.resolve()
const HOOK_TIMEOUT_MS = 10000

function run(event, body) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, HOOK_TIMEOUT_MS)
    const done = () => {
      clearTimeout(timer)
      resolve()
    }
    try {
      const child = spawn(HOOK[0], [...HOOK.slice(1), event], {stdio: ['pipe', 'ignore', 'ignore']})
      child.on('error', done)
      child.on('exit', done)
      child.stdin.on('error', () => {})
      child.stdin.end(body)
      child.unref()
    } catch {
      done()
    }
  })
}

function send(event, payload) {
  // The payload is taken now: the objects OpenCode hands over may change before the hook runs.
  const body = JSON.stringify(payload ?? {})
  queue = queue.then(() => run(event, body))
}

// A permission request waits for its approval in a hook of its own. It starts after the hooks
// before it (the tool's executing reaches the Hub first) and holds back those after it until the
// Hub holds the request (the hook's first line; or it exited, or ASK_HOLD_MS passed: as long as
// the hook waits for the Hub), so the thinking after an answer in the TUI finds the approval
// pending and marks it answered.
const ASK_HOLD_MS = ${ASK_HOLD_MS}

function ask(client, request) {
  const body = JSON.stringify(request)
  queue = queue.then(
    () =>
      new Promise((held) => {
        const timer = setTimeout(held, ASK_HOLD_MS)
        const release = () => {
          clearTimeout(timer)
          held()
        }
        let out = ''
        try {
          const child = spawn(HOOK[0], [...HOOK.slice(1), 'permission.asked'], {stdio: ['pipe', 'pipe', 'ignore']})
          child.stdout.setEncoding('utf8')
          child.stdout.on('data', (chunk) => {
            out += chunk
            if (out.includes('\\n')) release()
          })
          child.on('error', release)
          child.on('close', () => {
            release()
            reply(client, request, out).catch((err) => replyFailed(request, out, err))
          })
          child.stdin.on('error', () => {})
          child.stdin.end(body)
        } catch {
          release()
        }
      }),
  )
}

function verdictOf(out) {
  let verdict
  for (const line of out.split('\\n')) {
    try {
      const v = JSON.parse(line)
      if (v && (v.reply === 'once' || v.reply === 'reject')) verdict = v
    } catch {}
  }
  return verdict
}

// How the reply reaches OpenCode through the client it hands plugins, public API first: the v2
// SDK's permission.reply; else (the v1 client of OpenCode 1.18) its own method for the deprecated
// route, which takes a reply and no message: enough for an allow and for a deny without a reason.
// A deny's reason (the tool's error the model reads; without it OpenCode ends the turn) goes by
// the v2 route, which the v1 client has no method for: through its HTTP client (_client), the
// one use of an internal, until the client OpenCode hands plugins has the method.
function replyCall(client, request, verdict) {
  const message = typeof verdict.message === 'string' ? verdict.message : undefined
  if (typeof client?.permission?.reply === 'function') return client.permission.reply({requestID: request.id, reply: verdict.reply, ...(message !== undefined && {message})})
  if (message !== undefined && typeof client?._client?.post === 'function') return client._client.post({url: '/permission/{requestID}/reply', path: {requestID: request.id}, body: {reply: verdict.reply, message}, headers: {'Content-Type': 'application/json'}})
  if (typeof client?.postSessionIdPermissionsPermissionId === 'function') return client.postSessionIdPermissionsPermissionId({path: {id: request.sessionID, permissionID: request.id}, body: {response: verdict.reply}})
  throw new Error('the client OpenCode gave the plugin has no way to reply to a permission request')
}

// The hook's decision, if it printed one (none: answered in the TUI, expired, or no Hub), given
// to OpenCode. The SDK answers {data, error, response} rather than throwing: a 404 is a request
// OpenCode no longer holds (answered in the TUI first, or its session aborted): no harm. Any
// other refusal, or a throw, is the agent's error.
async function reply(client, request, out) {
  const verdict = verdictOf(out)
  if (!verdict || typeof request.id !== 'string') return
  const res = await replyCall(client, request, verdict)
  const status = res?.response?.status
  if (status === 404) return
  if (res?.error !== undefined || (typeof status === 'number' && status >= 400)) {
    const said = typeof res?.error === 'string' ? res.error : res?.error?.data?.message ?? res?.error?.message ?? JSON.stringify(res?.error ?? null)
    throw new Error(\`OpenCode answered \${status ?? 'an error'}: \${said}\`)
  }
}

// Reported through the queue like any event, so it lands after the request's own reports.
function replyFailed(request, out, err) {
  const verdict = verdictOf(out)
  send('permission.reply_failed', {id: request.id, sessionID: request.sessionID, permission: request.permission, patterns: request.patterns, metadata: {command: request.metadata?.command}, reply: verdict?.reply, error: String(err?.message ?? err)})
}

function totals(sessionID) {
  const msgs = usage.get(sessionID)
  if (!msgs) return undefined
  const t = {sessionId: sessionID, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, modelCalls: 0, costUsd: 0}
  for (const m of msgs.values()) {
    t.inputTokens += m.input
    t.outputTokens += m.output
    t.cacheReadTokens += m.cacheRead
    t.cacheWriteTokens += m.cacheWrite
    t.costUsd += m.cost
    t.modelCalls += 1
    if (m.model) t.model = m.model
  }
  return t
}

export const SvcHooks = async (input) => ({
  event: async ({event}) => {
    const p = event.properties ?? {}
    // A sub-agent's request waits like the agent's own (the TUI shows it the same way).
    if (event.type === 'permission.asked') return ask(input?.client, p)
    if (event.type === 'permission.replied') return send(event.type, {...p, lastTool: lastTool.get(p.sessionID)})
    if (event.type === 'session.created' || event.type === 'session.updated') {
      if (p.info?.parentID) children.add(p.info.id)
      return
    }
    if (event.type === 'message.updated') {
      const info = p.info
      if (info?.role !== 'assistant' || !info.tokens) return
      let msgs = usage.get(info.sessionID)
      if (!msgs) usage.set(info.sessionID, (msgs = new Map()))
      msgs.set(info.id, {
        input: info.tokens.input ?? 0,
        output: (info.tokens.output ?? 0) + (info.tokens.reasoning ?? 0),
        cacheRead: info.tokens.cache?.read ?? 0,
        cacheWrite: info.tokens.cache?.write ?? 0,
        cost: info.cost ?? 0,
        model: info.modelID,
      })
      return
    }
    if (!FORWARD.has(event.type)) return
    const sessionID = p.sessionID ?? p.info?.id
    if (sessionID && children.has(sessionID)) return
    if (event.type === 'session.status' && p.status?.type === 'busy') {
      busy.add(sessionID)
      errors.delete(sessionID)
    }
    if (event.type === 'session.error' && sessionID) errors.set(sessionID, p.error)
    if (event.type === 'session.idle') send(event.type, {...p, usage: totals(sessionID), lastError: errors.get(sessionID), endsTurn: busy.delete(sessionID)})
    else send(event.type, p)
  },
  'tool.execute.before': async (input, output) => {
    if (children.has(input.sessionID)) return
    const call = {tool: input.tool, sessionID: input.sessionID, callID: input.callID, args: output?.args}
    lastTool.set(input.sessionID, call)
    send('tool.execute.before', call)
  },
  'tool.execute.after': async (input) => {
    if (children.has(input.sessionID)) return
    send('tool.execute.after', {tool: input.tool, sessionID: input.sessionID, callID: input.callID})
  },
})
`
}
