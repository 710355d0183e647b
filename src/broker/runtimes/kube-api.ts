/**
 * A minimal Kubernetes API client on node:http(s) and ws: JSON requests, streamed GETs (logs),
 * and the exec subresource over WebSocket (`v4.channel.k8s.io`: every frame starts with a
 * channel byte — 0 stdin, 1 stdout, 2 stderr, 3 status).
 */
import http from 'node:http'
import https from 'node:https'
import WebSocket from 'ws'
import type {KubeTarget} from './kubeconfig.js'

export const EXEC_PROTOCOL = 'v4.channel.k8s.io'

export interface KubeResponse {
  status: number
  text: string
  json: unknown
}

/** Headers of every request: bearer token when the kubeconfig has one. */
export function authHeaders(t: KubeTarget): Record<string, string> {
  return t.token ? {Authorization: `Bearer ${t.token}`} : {}
}

/** TLS options of every request (also given to the WebSocket client). */
export function tlsOptions(t: KubeTarget): https.RequestOptions {
  return {ca: t.ca, cert: t.cert, key: t.key, rejectUnauthorized: !t.insecureSkipTlsVerify}
}

/** The message of a Kubernetes Status body, else the raw text. */
export function statusMessage(res: {status: number; text: string; json: unknown}): string {
  const m = (res.json as {message?: string} | undefined)?.message
  return `HTTP ${res.status}: ${m || res.text.slice(0, 300) || 'no body'}`
}

export interface ExecResult {
  stdout: Buffer
  stderr: Buffer
  /** 0 on success; the process's exit code when the status names one; 1 otherwise. */
  exitCode: number
  message?: string
}

/** An open exec stream (attach): raw channel I/O. */
export interface ExecStream {
  writeStdin(data: Buffer | string): void
  onStdout(l: (c: Buffer) => void): void
  onStderr(l: (c: Buffer) => void): void
  /** Channel 3: a JSON metav1.Status once the process ended. */
  onStatus(l: (c: Buffer) => void): void
  onClose(l: () => void): void
  close(): void
}

export class KubeApi {
  constructor(readonly target: KubeTarget) {}

  private url(path: string): URL {
    return new URL(this.target.server + path)
  }

  /** Starts a request; the caller ends it (with or without a body) and awaits `response`. */
  private open(method: string, path: string, headers: Record<string, string>, signal?: AbortSignal): {req: http.ClientRequest; response: Promise<http.IncomingMessage>} {
    const url = this.url(path)
    const mod = url.protocol === 'https:' ? https : http
    let req!: http.ClientRequest
    const response = new Promise<http.IncomingMessage>((resolve, reject) => {
      req = mod.request(url, {method, headers: {Accept: 'application/json', ...authHeaders(this.target), ...headers}, ...tlsOptions(this.target), signal}, resolve)
      req.on('error', (e) => reject(new Error(`Kubernetes API ${method} ${url.pathname} failed: ${e.message}`)))
    })
    return {req, response}
  }

  async request(method: string, path: string, body?: unknown): Promise<KubeResponse> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    const headers: Record<string, string> = payload ? {'Content-Type': 'application/json', 'Content-Length': String(payload.length)} : {}
    const {req, response} = this.open(method, path, headers)
    req.end(payload)
    const res = await response
    const chunks: Buffer[] = []
    for await (const c of res) chunks.push(c as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    let json: unknown
    try {
      json = text ? JSON.parse(text) : undefined
    } catch {
      json = undefined
    }
    return {status: res.statusCode ?? 0, text, json}
  }

  /** A GET whose body is streamed (logs); a non-2xx answer rejects with the API's message. */
  async *stream(path: string, signal?: AbortSignal): AsyncGenerator<Buffer> {
    if (signal?.aborted) return
    const {req, response} = this.open('GET', path, {}, signal)
    req.end()
    let res: http.IncomingMessage
    try {
      res = await response
    } catch (e) {
      if (signal?.aborted) return
      throw e
    }
    if ((res.statusCode ?? 0) >= 300) {
      const chunks: Buffer[] = []
      for await (const c of res) chunks.push(c as Buffer)
      const text = Buffer.concat(chunks).toString('utf8')
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {}
      throw new Error(`Kubernetes API GET ${this.url(path).pathname} failed: ${statusMessage({status: res.statusCode ?? 0, text, json})}`)
    }
    try {
      for await (const c of res) yield c as Buffer
    } catch (e) {
      if (!signal?.aborted) throw e
    } finally {
      res.destroy()
    }
  }

  /** Opens an exec WebSocket; resolves once the server accepted the upgrade. */
  execStream(path: string): Promise<ExecStream> {
    const url = this.url(path)
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
    const ws = new WebSocket(url, [EXEC_PROTOCOL], {headers: authHeaders(this.target), ...tlsOptions(this.target)})
    const listeners: Array<Array<(c: Buffer) => void>> = [[], [], [], []]
    const closes: Array<() => void> = []
    let closed = false
    const fireClose = () => {
      if (closed) return
      closed = true
      for (const l of closes) l()
    }
    ws.on('message', (data: WebSocket.RawData) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)
      const ch = buf[0]
      if (buf.length > 1 && ch !== undefined && ch >= 1 && ch <= 3) for (const l of listeners[ch]) l(buf.subarray(1))
    })
    ws.on('close', fireClose)
    const stream: ExecStream = {
      writeStdin: (data) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(Buffer.concat([Buffer.from([0]), Buffer.from(data)]))
      },
      onStdout: (l) => listeners[1].push(l),
      onStderr: (l) => listeners[2].push(l),
      onStatus: (l) => listeners[3].push(l),
      onClose: (l) => (closed ? queueMicrotask(l) : closes.push(l)),
      close: () => ws.terminate(),
    }
    return new Promise((resolve, reject) => {
      ws.on('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let json: unknown
          try {
            json = JSON.parse(text)
          } catch {}
          reject(new Error(`Kubernetes exec refused: ${statusMessage({status: res.statusCode ?? 0, text, json})}`))
          fireClose()
        })
      })
      ws.on('error', (e) => {
        reject(new Error(`Kubernetes exec failed: ${e.message}`))
        fireClose()
      })
      ws.on('open', () => resolve(stream))
    })
  }

  /** Runs a command through exec to completion (stdin optional) and collects its output. */
  async exec(path: string, stdin?: Buffer): Promise<ExecResult> {
    const s = await this.execStream(path)
    const out: Buffer[] = []
    const err: Buffer[] = []
    const status: Buffer[] = []
    s.onStdout((c) => out.push(c))
    s.onStderr((c) => err.push(c))
    s.onStatus((c) => status.push(c))
    if (stdin) s.writeStdin(stdin)
    await new Promise<void>((r) => s.onClose(r))
    return {stdout: Buffer.concat(out), stderr: Buffer.concat(err), ...parseExecStatus(status.length ? Buffer.concat(status) : undefined)}
  }
}

/** The exit of an exec from its status frame (channel 3): a metav1.Status. */
export function parseExecStatus(raw: Buffer | undefined): {exitCode: number; message?: string} {
  if (!raw || raw.length === 0) return {exitCode: 1, message: 'the exec stream ended without a status'}
  let st: {status?: string; message?: string; details?: {causes?: Array<{reason?: string; message?: string}>}}
  try {
    st = JSON.parse(raw.toString('utf8'))
  } catch {
    return {exitCode: 1, message: raw.toString('utf8')}
  }
  if (st.status === 'Success') return {exitCode: 0}
  const code = st.details?.causes?.find((c) => c.reason === 'ExitCode')?.message
  return {exitCode: code !== undefined && /^\d+$/.test(code) ? Number(code) : 1, message: st.message}
}
