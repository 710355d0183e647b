/**
 * A scripted Anthropic Messages API on 127.0.0.1:<random>, for running the real Claude Code CLI
 * in tests with `ANTHROPIC_BASE_URL` pointing here. It speaks the wire protocol Claude Code uses:
 * `POST /v1/messages?beta=true` with `stream: true` answered as Server-Sent Events
 * (`message_start`, `content_block_*`, `message_delta`, `message_stop`), `stream: false` answered
 * with one JSON message, and `POST /v1/messages/count_tokens`.
 *
 * Main requests (those that offer tools: the agent's conversation) are answered from a queue of
 * scripted turns (text, or a tool call); side requests (no tools: a session title, a summary)
 * get a short plain answer and never consume the queue. Every request is recorded. `hold()` keeps
 * the next main answers back until the test releases them, so a test can observe `thinking`.
 */
import {randomUUID} from 'node:crypto'
import http from 'node:http'
import type {AddressInfo} from 'node:net'

/** One scripted answer of the model (`delayMs`: answered that much later, as a slow model). */
export type ScriptedTurn =
  | {text: string; delayMs?: number}
  | {tool: {name: string; input: Record<string, unknown>}; text?: string; delayMs?: number}

export interface RecordedRequest {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  body: any
  /** A main turn of the conversation (the request offers tools). */
  main: boolean
  at: number
}

export interface AnthropicServer {
  /** http://127.0.0.1:<port>: the value for ANTHROPIC_BASE_URL. */
  url: string
  requests: RecordedRequest[]
  /** The main (conversation) requests only. */
  mainRequests(): RecordedRequest[]
  /** Queues turns answered to the next main requests, in order. */
  enqueue(...turns: ScriptedTurn[]): void
  /**
   * Answers main requests from their content instead (several harnesses at once, each in its own
   * conversation); when it returns undefined, the queue answers.
   */
  respond(fn: ((body: any) => ScriptedTurn | undefined) | null): void
  /** When each answer to a request finished streaming (ms since the epoch), by request. */
  answeredAt: Map<RecordedRequest, number>
  /** Holds main answers from now on; the returned function releases them (and stops holding). */
  hold(): () => void
  /** Waits for a recorded request matching `pred` (bounded), returning it. */
  waitForRequest(pred: (r: RecordedRequest) => boolean, timeoutMs: number, what: string): Promise<RecordedRequest>
  /** Usage reported on each answer (tokens), so tests can check what a harness sums. */
  usage: {input_tokens: number; output_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number}
  close(): Promise<void>
}

/** The text of a user message's content (string or blocks), for tests to find a prompt. */
export function userText(body: any): string {
  const messages: any[] = body?.messages ?? []
  return messages
    .filter((m) => m.role === 'user')
    .flatMap((m) => (typeof m.content === 'string' ? [m.content] : (m.content ?? []).map((b: any) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? JSON.stringify(b.content) : ''))))
    .join('\n')
}

/** The last message of a request, as text (the newest prompt or tool result). */
export function lastUserText(body: any): string {
  const last = (body?.messages ?? []).at(-1)
  return last ? userText({messages: [last]}) : ''
}

export async function startAnthropicServer(): Promise<AnthropicServer> {
  const requests: RecordedRequest[] = []
  const queue: ScriptedTurn[] = []
  const waiters: Array<() => void> = []
  let responder: ((body: any) => ScriptedTurn | undefined) | null = null
  const answeredAt = new Map<RecordedRequest, number>()
  let holding = false
  let released: Promise<void> = Promise.resolve()
  const usage = {input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 5, cache_creation_input_tokens: 7}

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      let body: any = null
      try {
        body = text ? JSON.parse(text) : null
      } catch {
        body = text
      }
      const path = (req.url ?? '/').split('?')[0]
      const main = path === '/v1/messages' && Array.isArray(body?.tools) && body.tools.length > 0
      const recorded: RecordedRequest = {method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body, main, at: Date.now()}
      requests.push(recorded)
      for (const w of waiters.splice(0)) w()
      void answer(path, recorded, res).catch(() => res.destroy())
    })
  })

  async function answer(path: string, r: RecordedRequest, res: http.ServerResponse) {
    if (r.method === 'POST' && path === '/v1/messages/count_tokens') return json(res, 200, {input_tokens: 1000})
    if (r.method !== 'POST' || path !== '/v1/messages') return json(res, 404, {type: 'error', error: {type: 'not_found_error', message: `no ${r.method} ${path} here`}})
    let turn: ScriptedTurn
    if (r.main) {
      if (holding) await released
      turn = responder?.(r.body) ?? queue.shift() ?? {text: 'Done.'}
      if (turn.delayMs) await new Promise((resolve) => setTimeout(resolve, turn.delayMs))
    } else {
      // A side request (title, summary): a short answer that fits any of them.
      turn = {text: r.body?.output_format || /json/i.test(JSON.stringify(r.body?.system ?? '')) ? '{"title": "Scripted task"}' : 'Scripted task'}
    }
    const model = r.body?.model ?? 'claude-scripted'
    if (r.body?.stream) {
      stream(res, model, turn)
      answeredAt.set(r, Date.now())
      return
    }
    const content = blocks(turn)
    answeredAt.set(r, Date.now())
    json(res, 200, {id: `msg_${randomUUID()}`, type: 'message', role: 'assistant', model, content, stop_reason: 'tool' in turn ? 'tool_use' : 'end_turn', stop_sequence: null, usage})
  }

  function blocks(turn: ScriptedTurn): any[] {
    const out: any[] = []
    if ('text' in turn && turn.text) out.push({type: 'text', text: turn.text})
    if ('tool' in turn) out.push({type: 'tool_use', id: `toolu_${randomUUID().replace(/-/g, '')}`, name: turn.tool.name, input: turn.tool.input})
    return out
  }

  function stream(res: http.ServerResponse, model: string, turn: ScriptedTurn) {
    res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'request-id': `req_${randomUUID()}`})
    const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    const id = `msg_${randomUUID()}`
    send('message_start', {type: 'message_start', message: {id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: {input_tokens: usage.input_tokens, output_tokens: 1, cache_read_input_tokens: usage.cache_read_input_tokens, cache_creation_input_tokens: usage.cache_creation_input_tokens}}})
    send('ping', {type: 'ping'})
    blocks(turn).forEach((block, index) => {
      if (block.type === 'text') {
        send('content_block_start', {type: 'content_block_start', index, content_block: {type: 'text', text: ''}})
        send('content_block_delta', {type: 'content_block_delta', index, delta: {type: 'text_delta', text: block.text}})
      } else {
        send('content_block_start', {type: 'content_block_start', index, content_block: {type: 'tool_use', id: block.id, name: block.name, input: {}}})
        send('content_block_delta', {type: 'content_block_delta', index, delta: {type: 'input_json_delta', partial_json: JSON.stringify(block.input)}})
      }
      send('content_block_stop', {type: 'content_block_stop', index})
    })
    send('message_delta', {type: 'message_delta', delta: {stop_reason: 'tool' in turn ? 'tool_use' : 'end_turn', stop_sequence: null}, usage: {output_tokens: usage.output_tokens}})
    send('message_stop', {type: 'message_stop'})
    res.end()
  }

  function json(res: http.ServerResponse, status: number, body: unknown) {
    res.writeHead(status, {'content-type': 'application/json', 'request-id': `req_${randomUUID()}`})
    res.end(JSON.stringify(body))
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    usage,
    mainRequests: () => requests.filter((r) => r.main),
    enqueue: (...turns) => void queue.push(...turns),
    respond: (fn) => void (responder = fn),
    answeredAt,
    hold() {
      let release!: () => void
      released = new Promise<void>((resolve) => (release = resolve))
      holding = true
      return () => {
        holding = false
        release()
      }
    },
    async waitForRequest(pred, timeoutMs, what) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const found = requests.find(pred)
        if (found) return found
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; saw ${requests.length} requests: ${requests.map((r) => `${r.method} ${r.path}${r.main ? ' (main)' : ''}`).join(', ')}`)
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.min(left, 500))
          waiters.push(() => (clearTimeout(t), resolve()))
        })
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
