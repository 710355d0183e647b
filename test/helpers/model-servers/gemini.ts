/**
 * A scripted Gemini API of the test suite's own, on 127.0.0.1:<free port>, speaking the wire
 * protocol Gemini CLI uses with an API key and `GOOGLE_GEMINI_BASE_URL`:
 * `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` (Server-Sent Events, one
 * `GenerateContentResponse` per `data:` line) for the chat, and `POST .../<model>:generateContent`
 * for the CLI's side calls (model routing, next-speaker and loop checks, summaries), plus
 * `countTokens` and the model list. Chat requests are answered from a queue of scripted turns;
 * side calls get a sensible canned answer. Every request is recorded, and a turn can be held
 * until the test releases it (to observe the agent `thinking`).
 */
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'

/** One scripted model answer to a chat request. */
export type GeminiTurn =
  | {text: string; hold?: boolean}
  /** A `run_shell_command` tool call (Gemini CLI's shell tool). */
  | {shell: string; description?: string; hold?: boolean}
  | {functionCall: {name: string; args: Record<string, unknown>}; hold?: boolean}
  /** An API error answer (400 and the like: Gemini CLI retries 429 and 5xx). */
  | {error: number; message: string; hold?: boolean}

export interface RecordedRequest {
  method: string
  /** Path and query as sent (`/v1beta/models/x:streamGenerateContent?alt=sse`). */
  url: string
  /** `stream` (chat), `generate` (side call), `count` (countTokens), `other`. */
  kind: 'stream' | 'generate' | 'count' | 'other'
  model: string | null
  headers: IncomingMessage['headers']
  body: any
  /** The text of the last user content's text parts (the prompt, for a chat request). */
  lastUserText: string
  /** True when the last user content answers a tool call (functionResponse). */
  isToolResult: boolean
  /** When it arrived (Date.now()). */
  at: number
}

export interface GeminiModelServer {
  url: string
  port: number
  requests: RecordedRequest[]
  /** Chat requests only (`streamGenerateContent`). */
  chats(): RecordedRequest[]
  enqueue(...turns: GeminiTurn[]): void
  /** Resolves once a chat request met a `hold: true` turn and is waiting for `release()`. */
  waitForHeld(timeoutMs?: number): Promise<RecordedRequest>
  /** Lets the held answer go. */
  release(): void
  /** Resolves with the first recorded request (past or future) that `pred` accepts. */
  waitForRequest(pred: (r: RecordedRequest) => boolean, timeoutMs?: number, what?: string): Promise<RecordedRequest>
  close(): Promise<void>
}

const USAGE = {promptTokenCount: 120, candidatesTokenCount: 8, totalTokenCount: 128}

function lastUser(body: any): {text: string; isToolResult: boolean} {
  const contents: any[] = Array.isArray(body?.contents) ? body.contents : []
  const last = [...contents].reverse().find((c) => c?.role === 'user')
  const parts: any[] = Array.isArray(last?.parts) ? last.parts : []
  return {
    text: parts.filter((p) => typeof p?.text === 'string').map((p) => p.text).join(''),
    isToolResult: parts.some((p) => p?.functionResponse),
  }
}

function partsOf(turn: GeminiTurn): any[] {
  if ('text' in turn) return [{text: turn.text}]
  if ('error' in turn) return []
  if ('shell' in turn) return [{functionCall: {name: 'run_shell_command', args: {command: turn.shell, description: turn.description ?? 'scripted command'}}}]
  return [{functionCall: turn.functionCall}]
}

/**
 * A side call's answer. The router's classifier asks for JSON with `model_choice`; a
 * next-speaker check asks for `next_speaker`; anything else (summaries, titles) gets short text.
 */
function sideAnswer(body: any): string {
  const schema = JSON.stringify(body?.generationConfig?.responseJsonSchema ?? body?.generationConfig?.responseSchema ?? '')
  const all = JSON.stringify(body?.systemInstruction ?? '') + schema
  if (all.includes('model_choice')) return JSON.stringify({reasoning: 'simple task', model_choice: 'flash'})
  if (all.includes('next_speaker')) return JSON.stringify({reasoning: 'the model answered', next_speaker: 'user'})
  if (schema.includes('complexity')) return JSON.stringify({complexity_reasoning: 'simple', complexity_score: 1})
  if (schema.includes('unproductive_state_confidence')) return JSON.stringify({unproductive_state_analysis: 'no loop', unproductive_state_confidence: 0})
  return 'Scripted summary.'
}

export async function startGeminiModelServer(): Promise<GeminiModelServer> {
  const queue: GeminiTurn[] = []
  const requests: RecordedRequest[] = []
  const watchers = new Set<() => void>()
  let held: {req: RecordedRequest; go: () => void} | null = null
  let released = false
  const heldWaiters: Array<(r: RecordedRequest) => void> = []
  const notify = () => watchers.forEach((w) => w())

  const readBody = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let data = ''
      req.on('data', (d) => (data += d))
      req.on('end', () => resolve(data))
    })

  const json = (res: ServerResponse, status: number, value: unknown) => {
    res.writeHead(status, {'content-type': 'application/json'})
    res.end(JSON.stringify(value))
  }

  const stream = async (res: ServerResponse, turn: GeminiTurn) => {
    res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive'})
    const parts = partsOf(turn)
    const chunk = (value: unknown) => res.write(`data: ${JSON.stringify(value)}\r\n\r\n`)
    if ('text' in turn && turn.text.length > 8) {
      // Two chunks, as a real stream sends text in pieces.
      const cut = Math.floor(turn.text.length / 2)
      chunk({candidates: [{content: {role: 'model', parts: [{text: turn.text.slice(0, cut)}]}, index: 0}], modelVersion: 'scripted'})
      parts[0] = {text: turn.text.slice(cut)}
    }
    chunk({candidates: [{content: {role: 'model', parts}, finishReason: 'STOP', index: 0}], usageMetadata: USAGE, modelVersion: 'scripted'})
    res.end()
  }

  const server: Server = createServer(async (req, res) => {
    const raw = await readBody(req)
    let body: any = null
    try {
      body = raw ? JSON.parse(raw) : null
    } catch {
      body = raw
    }
    const url = req.url ?? '/'
    const m = /\/models\/([^/:?]+):(\w+)/.exec(url)
    const method = m?.[2] ?? ''
    const kind: RecordedRequest['kind'] =
      method === 'streamGenerateContent' ? 'stream' : method === 'generateContent' ? 'generate' : method === 'countTokens' ? 'count' : 'other'
    const rec: RecordedRequest = {at: Date.now(), method: req.method ?? 'GET', url, kind, model: m?.[1] ?? null, headers: req.headers, body, ...(() => {
      const u = lastUser(body)
      return {lastUserText: u.text, isToolResult: u.isToolResult}
    })()}
    requests.push(rec)
    notify()

    if (kind === 'stream') {
      const turn = queue.shift() ?? {text: 'Done.'}
      if (turn.hold) {
        released = false
        await new Promise<void>((go) => {
          held = {req: rec, go}
          heldWaiters.splice(0).forEach((w) => w(rec))
        })
        held = null
      }
      if ('error' in turn) return json(res, turn.error, {error: {code: turn.error, message: turn.message, status: 'INVALID_ARGUMENT'}})
      await stream(res, turn)
      return
    }
    if (kind === 'generate') {
      const text = sideAnswer(body)
      return json(res, 200, {candidates: [{content: {role: 'model', parts: [{text}]}, finishReason: 'STOP', index: 0}], usageMetadata: USAGE, modelVersion: 'scripted'})
    }
    if (kind === 'count') return json(res, 200, {totalTokens: 100})
    if (req.method === 'GET' && /\/models\/?(\?|$)/.test(url)) {
      return json(res, 200, {models: [{name: 'models/gemini-2.5-flash', displayName: 'Gemini 2.5 Flash', supportedGenerationMethods: ['generateContent']}]})
    }
    json(res, 404, {error: {code: 404, message: `scripted Gemini server: nothing at ${req.method} ${url}`, status: 'NOT_FOUND'}})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as {port: number}).port

  const waitForRequest = (pred: (r: RecordedRequest) => boolean, timeoutMs = 60_000, what = 'a matching request') =>
    new Promise<RecordedRequest>((resolve, reject) => {
      const check = () => {
        const hit = requests.find(pred)
        if (!hit) return false
        watchers.delete(check)
        clearTimeout(timer)
        resolve(hit)
        return true
      }
      const timer = setTimeout(() => {
        watchers.delete(check)
        reject(new Error(`scripted Gemini server: no ${what} within ${timeoutMs} ms; saw ${requests.map((r) => `${r.method} ${r.url}`).join(', ') || 'nothing'}`))
      }, timeoutMs)
      if (!check()) watchers.add(check)
    })

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    chats: () => requests.filter((r) => r.kind === 'stream'),
    enqueue: (...turns) => void queue.push(...turns),
    waitForHeld: (timeoutMs = 60_000) =>
      new Promise<RecordedRequest>((resolve, reject) => {
        const h = held as {req: RecordedRequest} | null
        if (h && !released) return resolve(h.req)
        const timer = setTimeout(() => reject(new Error(`scripted Gemini server: no held request within ${timeoutMs} ms`)), timeoutMs)
        heldWaiters.push((r) => {
          clearTimeout(timer)
          resolve(r)
        })
      }),
    release: () => {
      released = true
      const h = held as {go: () => void} | null
      h?.go()
    },
    waitForRequest,
    close: () =>
      new Promise<void>((resolve) => {
        const h = held as {go: () => void} | null
        h?.go()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
