/**
 * A scripted OpenAI Responses API server for the tests: the real Codex CLI talks to it as it
 * would to api.openai.com (`POST /v1/responses`, `stream: true`, Server-Sent Events). Only the
 * model is fake: each main request takes the next turn from a queue (plain text, or a shell tool
 * call that the real CLI then runs), and a test can hold an answer to observe the harness while
 * "the model works". Every request is recorded.
 */
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'

/** One scripted model answer. */
export type ResponsesTurn =
  | {text: string}
  /** A shell tool call: the CLI runs `command` with bash in its working directory. */
  | {shell: string; text?: string}
  /** Any other function call, as the model would make it (e.g. `request_user_input`). */
  | {call: string; arguments: Record<string, unknown>}
  /** An API error answer (no stream), e.g. 400 for an invalid request. */
  | {error: number; message: string}

export interface RecordedRequest {
  method: string
  path: string
  headers: IncomingMessage['headers']
  body: any
  at: number
}

export interface ResponsesServer {
  /** Base URL to give a provider (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string
  port: number
  /** Every request, side requests and refused WebSocket upgrades included. */
  requests: RecordedRequest[]
  /** The `POST /v1/responses` requests, in order. */
  responses(): RecordedRequest[]
  /** Adds turns to the script; a request with an empty script is answered "(no script)". */
  enqueue(...turns: ResponsesTurn[]): void
  /** Holds the next answers until `release()` (the request is recorded as it arrives). */
  hold(): void
  release(): void
  /** Resolves with the first recorded request (past `after`) matching `pred`. */
  waitForRequest(pred: (r: RecordedRequest) => boolean, timeoutMs?: number, what?: string, after?: number): Promise<RecordedRequest>
  close(): Promise<void>
}

/** The text of every user message in a Responses request's `input`. */
export function userTexts(body: any): string[] {
  const out: string[] = []
  for (const item of Array.isArray(body?.input) ? body.input : []) {
    if (item?.type !== 'message' || item.role !== 'user') continue
    for (const part of Array.isArray(item.content) ? item.content : []) if (typeof part?.text === 'string') out.push(part.text)
  }
  return out
}

/** The outputs of tool calls the CLI sends back (`function_call_output` / `custom_tool_call_output`). */
export function toolOutputs(body: any): string[] {
  const out: string[] = []
  for (const item of Array.isArray(body?.input) ? body.input : []) {
    if (typeof item?.type === 'string' && item.type.endsWith('_call_output')) out.push(typeof item.output === 'string' ? item.output : JSON.stringify(item.output))
  }
  return out
}

/**
 * The function call to run `command`, shaped for whichever shell tool the CLI offered in this
 * request (the tool set depends on the model family and the CLI version).
 */
function shellCall(body: any, command: string, callId: string): Record<string, unknown> {
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : []
  const names = new Set<string>(tools.map((t: any) => t?.name).filter(Boolean))
  const call = (name: string, args: unknown) => ({type: 'function_call', id: `fc_${callId}`, call_id: callId, name, arguments: JSON.stringify(args), status: 'completed'})
  if (names.has('exec_command')) return call('exec_command', {cmd: command, yield_time_ms: 10_000})
  // Code mode (newer model families): the tools live in an `additional_tools` input item and the
  // model writes JavaScript for a custom `exec` tool that calls them.
  const codeMode = (Array.isArray(body?.input) ? body.input : []).some((i: any) => i?.type === 'additional_tools' && JSON.stringify(i.tools).includes('"name":"exec"'))
  if (codeMode) {
    const js = `const r = await tools.exec_command({cmd: ${JSON.stringify(command)}, yield_time_ms: 10000});\ntext(JSON.stringify(r));`
    return {type: 'custom_tool_call', id: `ctc_${callId}`, call_id: callId, name: 'exec', namespace: 'functions', input: js, status: 'completed'}
  }
  if (names.has('shell_command')) return call('shell_command', {command})
  return call('shell', {command: ['bash', '-lc', command]})
}

export async function startResponsesServer(): Promise<ResponsesServer> {
  const requests: RecordedRequest[] = []
  const script: ResponsesTurn[] = []
  let held = false
  let waiting: Array<() => void> = []
  let seq = 0
  const watchers = new Set<() => void>()
  const notify = () => {
    for (const w of [...watchers]) w()
  }

  const record = (req: IncomingMessage, body: any) => {
    const r = {method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, at: Date.now()}
    requests.push(r)
    notify()
    return r
  }

  const answer = async (req: IncomingMessage, res: ServerResponse, body: any) => {
    const path = (req.url ?? '').split('?')[0]
    if (req.method === 'GET' && path.endsWith('/models')) {
      // Model discovery: an empty catalogue makes the CLI fall back to its built-in model info.
      res.writeHead(200, {'content-type': 'application/json'}).end(JSON.stringify({object: 'list', data: [], models: []}))
      return
    }
    if (req.method !== 'POST' || !path.endsWith('/responses')) {
      res.writeHead(404, {'content-type': 'application/json'}).end(JSON.stringify({error: {message: `no route ${req.method} ${path}`, type: 'invalid_request_error'}}))
      return
    }
    if (isTitleRequest(req, body)) {
      // The CLI names each new thread with a tool-less side request; it is not a scripted turn.
      return streamTurn(res, body, {text: JSON.stringify({title: 'Scripted task'})})
    }
    if (held) await new Promise<void>((r) => waiting.push(r))
    return streamTurn(res, body, script.shift() ?? {text: '(no script)'})
  }

  const streamTurn = (res: ServerResponse, body: any, turn: ResponsesTurn) => {
    if ('error' in turn) {
      res.writeHead(turn.error, {'content-type': 'application/json'}).end(JSON.stringify({error: {message: turn.message, type: 'invalid_request_error', code: null}}))
      return
    }
    const id = `resp_${++seq}`
    const model = typeof body?.model === 'string' ? body.model : 'gpt-test'
    const output: Record<string, unknown>[] = []
    if ('shell' in turn) {
      if (turn.text) output.push(message(`msg_${seq}`, turn.text))
      output.push(shellCall(body, turn.shell, `call_${seq}`))
    } else if ('call' in turn) {
      output.push({type: 'function_call', id: `fc_call_${seq}`, call_id: `call_${seq}`, name: turn.call, arguments: JSON.stringify(turn.arguments), status: 'completed'})
    } else {
      output.push(message(`msg_${seq}`, turn.text))
    }
    const events: Array<Record<string, unknown>> = [{type: 'response.created', response: {id, object: 'response', status: 'in_progress', model, output: []}}]
    output.forEach((item, index) => {
      events.push({type: 'response.output_item.added', output_index: index, item: {...item, status: 'in_progress'}})
      if (item.type === 'message') {
        const text = (item.content as any[])[0].text as string
        events.push({type: 'response.output_text.delta', output_index: index, content_index: 0, item_id: item.id, delta: text})
        events.push({type: 'response.output_text.done', output_index: index, content_index: 0, item_id: item.id, text})
      }
      events.push({type: 'response.output_item.done', output_index: index, item})
    })
    const usage = {input_tokens: 100 * seq, input_tokens_details: {cached_tokens: 10}, output_tokens: 20, output_tokens_details: {reasoning_tokens: 0}, total_tokens: 100 * seq + 20}
    events.push({type: 'response.completed', response: {id, object: 'response', status: 'completed', model, output, usage}})
    res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive'})
    for (const e of events) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)
    res.end()
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      let body: any = raw
      try {
        body = raw ? JSON.parse(raw) : null
      } catch {
        // Kept as text: a compressed or non-JSON body is still recorded.
      }
      record(req, body)
      answer(req, res, body).catch((err) => {
        if (!res.headersSent) res.writeHead(500).end(String(err))
      })
    })
  })
  // Codex tries a Responses WebSocket first; refusing the upgrade at once makes it fall back to
  // HTTP + SSE without waiting for a timeout.
  server.on('upgrade', (req, socket) => {
    record(req, null)
    socket.end('HTTP/1.1 426 Upgrade Required\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    responses: () => requests.filter((r) => r.method === 'POST' && r.path.split('?')[0].endsWith('/responses')),
    enqueue: (...turns) => void script.push(...turns),
    hold: () => void (held = true),
    release: () => {
      held = false
      const w = waiting
      waiting = []
      for (const r of w) r()
    },
    waitForRequest: (pred, timeoutMs = 60_000, what = 'a matching model request', after = 0) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = requests.slice(after).find(pred)
          if (!found) return
          watchers.delete(check)
          clearTimeout(timer)
          resolve(found)
        }
        const timer = setTimeout(() => {
          watchers.delete(check)
          reject(new Error(`the model server saw no ${what} within ${timeoutMs} ms (requests: ${requests.map((r) => `${r.method} ${r.path}`).join(', ')})`))
        }, timeoutMs)
        watchers.add(check)
        check()
      }),
    close: async () => {
      held = false
      for (const r of waiting) r()
      waiting = []
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}

/** The side request that names a new thread (a JSON-schema answer with a `title`). */
function isTitleRequest(req: IncomingMessage, body: any): boolean {
  if (body?.text?.format?.schema?.properties?.title) return true
  try {
    return JSON.parse(String(req.headers['x-codex-turn-metadata'] ?? '{}')).thread_source === 'thread_title'
  } catch {
    return false
  }
}

function message(id: string, text: string): Record<string, unknown> {
  return {type: 'message', id, role: 'assistant', status: 'completed', content: [{type: 'output_text', text, annotations: []}]}
}
