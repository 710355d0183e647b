/**
 * A scripted OpenAI-compatible Chat Completions server (`POST /v1/chat/completions`, SSE when
 * `stream: true`) on 127.0.0.1:0, for OpenCode pointed at it through a custom provider
 * (`@ai-sdk/openai-compatible`, bundled in the OpenCode binary). Only the model endpoint is fake.
 *
 * Requests that carry tools are agent turns: each takes the next scripted reply from the queue.
 * Requests without tools are side requests (OpenCode's session title, summaries): answered with a
 * short text, queue untouched. Every request is recorded.
 */
import {createServer, type IncomingMessage, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

export type ScriptedReply =
  | {text: string; hold?: Promise<void>}
  | {tool: string; args: Record<string, unknown>; hold?: Promise<void>}
  /** An API error answer (400 and the like are not retried; 429 and 5xx are). */
  | {error: number; message: string}

export interface RecordedRequest {
  path: string
  body: any
  side: boolean
}

export interface ChatModelServer {
  url: string
  /** Base URL for the provider's `options.baseURL` (ends in `/v1`). */
  baseURL: string
  requests: RecordedRequest[]
  /** Agent-turn requests only (with tools). */
  turns(): RecordedRequest[]
  push(...replies: ScriptedReply[]): void
  /** Resolves with the first request (from index `from`) matching, or fails naming `what`. */
  waitForRequest(match: (r: RecordedRequest) => boolean, timeoutMs: number, what: string, from?: number): Promise<RecordedRequest>
  close(): Promise<void>
}

/** A promise the test resolves to let a held reply go. */
export function gate(): {promise: Promise<void>; release: () => void} {
  let release!: () => void
  const promise = new Promise<void>((r) => (release = r))
  return {promise, release}
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let data = ''
    req.setEncoding('utf8')
    req.on('data', (c) => (data += c))
    req.on('end', () => resolve(data))
    req.on('error', reject)
  })

/** Last user message's text, for tests that check a prompt reached the model. */
export function lastUserText(body: any): string {
  const msgs: any[] = body?.messages ?? []
  for (let i = msgs.length - 1; i >= 0; i--) {
    if (msgs[i].role !== 'user') continue
    const c = msgs[i].content
    return typeof c === 'string' ? c : Array.isArray(c) ? c.map((p: any) => p.text ?? '').join('') : ''
  }
  return ''
}

export async function startChatModelServer(): Promise<ChatModelServer> {
  const queue: ScriptedReply[] = []
  const requests: RecordedRequest[] = []
  let n = 0
  const server: Server = createServer(async (req, res) => {
    const path = req.url ?? ''
    const raw = await readBody(req)
    let body: any = null
    try {
      body = raw ? JSON.parse(raw) : null
    } catch {}
    if (req.method === 'GET' && path.startsWith('/v1/models')) {
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(JSON.stringify({object: 'list', data: [{id: 'scripted', object: 'model', owned_by: 'test'}]}))
      return
    }
    if (req.method !== 'POST' || !path.startsWith('/v1/chat/completions')) {
      res.writeHead(404, {'content-type': 'application/json'})
      res.end(JSON.stringify({error: {message: `no route ${req.method} ${path}`}}))
      return
    }
    const side = !(Array.isArray(body?.tools) && body.tools.length > 0)
    requests.push({path, body, side})
    const reply: ScriptedReply = side ? {text: 'Scripted task'} : (queue.shift() ?? {text: 'Done.'})
    if ('error' in reply) {
      res.writeHead(reply.error, {'content-type': 'application/json'})
      res.end(JSON.stringify({error: {message: reply.message, type: 'invalid_request_error', code: null}}))
      return
    }
    // A streamed answer is held after its headers, as a real API holds between chunks while the
    // model works: held before the headers for long (45 s and more), OpenCode 1.18's tool call
    // that followed stalled for minutes.
    if (body?.stream) res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive'})
    if (reply.hold) await reply.hold
    const id = `chatcmpl-${++n}`
    const model = body?.model ?? 'scripted'
    const chunk = (delta: object, finish: string | null, usage?: object) =>
      JSON.stringify({id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [{index: 0, delta, finish_reason: finish}], ...(usage ? {usage} : {})})
    const usage = {prompt_tokens: 100, completion_tokens: 10, total_tokens: 110}
    const events: string[] = []
    if ('tool' in reply) {
      events.push(chunk({role: 'assistant', content: null, tool_calls: [{index: 0, id: `call_${n}`, type: 'function', function: {name: reply.tool, arguments: ''}}]}, null))
      events.push(chunk({tool_calls: [{index: 0, function: {arguments: JSON.stringify(reply.args)}}]}, null))
      events.push(chunk({}, 'tool_calls', usage))
    } else {
      events.push(chunk({role: 'assistant', content: reply.text}, null))
      events.push(chunk({}, 'stop', usage))
    }
    if (body?.stream) {
      for (const e of events) res.write(`data: ${e}\n\n`)
      res.end('data: [DONE]\n\n')
    } else {
      const message = 'tool' in reply
        ? {role: 'assistant', content: null, tool_calls: [{id: `call_${n}`, type: 'function', function: {name: reply.tool, arguments: JSON.stringify(reply.args)}}]}
        : {role: 'assistant', content: reply.text}
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(JSON.stringify({id, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model, choices: [{index: 0, message, finish_reason: 'tool' in reply ? 'tool_calls' : 'stop'}], usage}))
    }
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const {port} = server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}`
  return {
    url,
    baseURL: `${url}/v1`,
    requests,
    turns: () => requests.filter((r) => !r.side),
    push: (...replies) => void queue.push(...replies),
    async waitForRequest(match, timeoutMs, what, from = 0) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const hit = requests.slice(from).find(match)
        if (hit) return hit
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (requests: ${requests.length})`)
        await new Promise((r) => setTimeout(r, 200))
      }
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections?.()
        server.close(() => r())
      }),
  }
}
