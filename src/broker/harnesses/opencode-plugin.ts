/**
 * The OpenCode plugin svc writes into the agent's HOME (~/.config/opencode/plugin/svc-hooks.js).
 * OpenCode loads it in its own Bun runtime; it forwards the few events svc maps to
 * `[...hookCommand, <event>]` with the event's JSON on stdin, without making OpenCode wait for
 * the hook (the agent never blocks on svc). The hooks run one after another, in the order of the
 * events: run side by side, a turn's `busy` report could reach the Hub after its `idle` and leave
 * a finished agent showing `thinking`. It keeps each session's token totals itself, so the idle
 * event carries cumulative usage and the hook does no I/O, the error a turn stopped on
 * (`lastError`), and whether it ends a turn (`endsTurn`).
 */
export const PLUGIN_FILE = 'svc-hooks.js'

export function pluginSource(hookCommand: string[]): string {
  return `// Written by svc on every start: changes here are overwritten.
import {spawn} from 'node:child_process'

const HOOK = ${JSON.stringify(hookCommand)}
const FORWARD = new Set(['session.status', 'session.idle', 'session.error', 'permission.asked', 'permission.updated', 'permission.replied', 'question.asked', 'question.replied', 'question.rejected'])
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

export const SvcHooks = async () => ({
  event: async ({event}) => {
    const p = event.properties ?? {}
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
    else if (event.type === 'permission.replied') send(event.type, {...p, lastTool: lastTool.get(sessionID)})
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
