import {createServer, type IncomingHttpHeaders, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {fileURLToPath} from 'node:url'
import {gunzipSync} from 'node:zlib'
import protobuf from 'protobufjs'

/** One span as the receiver decoded it: attributes and resource attributes as plain values. */
export interface ReceivedSpan {
  name: string
  attributes: Record<string, unknown>
  resource: Record<string, unknown>
  startTimeMs: number
}

/** One POST /v1/traces: what a single exported batch held. */
export interface ReceivedRequest {
  contentType: string
  headers: IncomingHttpHeaders
  spans: ReceivedSpan[]
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>` (the exporter appends `/v1/traces`). */
  url: string
  requests: ReceivedRequest[]
  spans(): ReceivedSpan[]
  /** Resolves at the next decoded request (to wait for a timer-driven export without timing it). */
  nextRequest(): Promise<ReceivedRequest>
  close(): Promise<void>
}

const root = protobuf.loadSync(fileURLToPath(new URL('./otlp-trace.proto', import.meta.url)))
const Request = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest')
const Response = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse')

type AnyValue = Record<string, unknown> | undefined
type KeyValue = {key: string; value?: AnyValue}

/** An OTLP AnyValue; protobuf (toObject with longs as strings) and JSON use the same camelCase names. */
function valueOf(v: AnyValue): unknown {
  if (!v) return undefined
  if ('stringValue' in v) return v.stringValue
  if ('boolValue' in v) return v.boolValue
  if ('intValue' in v) return Number(v.intValue)
  if ('doubleValue' in v) return Number(v.doubleValue)
  if ('arrayValue' in v) return ((v.arrayValue as {values?: AnyValue[]}).values ?? []).map(valueOf)
  if ('kvlistValue' in v) return attrs((v.kvlistValue as {values?: KeyValue[]}).values)
  return undefined
}

const attrs = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]))

/** Flattens an ExportTraceServiceRequest (as a plain object) into spans. */
function spansOf(req: any): ReceivedSpan[] {
  const out: ReceivedSpan[] = []
  for (const rs of req.resourceSpans ?? []) {
    const resource = attrs(rs.resource?.attributes)
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) out.push({name: s.name, attributes: attrs(s.attributes), resource, startTimeMs: Number(BigInt(s.startTimeUnixNano ?? 0) / 1_000_000n)})
    }
  }
  return out
}

/**
 * A real OTLP/HTTP trace receiver on loopback: POST /v1/traces with a protobuf
 * (`application/x-protobuf`, decoded with protobufjs and otlp-trace.proto) or JSON
 * (`application/json`) ExportTraceServiceRequest, gzip or not. Anything else is 404/415.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: ReceivedRequest[] = []
  const waiters: Array<(r: ReceivedRequest) => void> = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end()
      let body = Buffer.concat(chunks)
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body)
      const contentType = String(req.headers['content-type'] ?? '').split(';')[0].trim()
      let decoded: unknown
      try {
        if (contentType === 'application/x-protobuf') decoded = Request.toObject(Request.decode(body), {longs: String, bytes: String, defaults: false})
        else if (contentType === 'application/json') decoded = JSON.parse(body.toString('utf8'))
        else return void res.writeHead(415).end()
      } catch {
        return void res.writeHead(400).end()
      }
      const received = {contentType, headers: req.headers, spans: spansOf(decoded)}
      requests.push(received)
      for (const w of waiters.splice(0)) w(received)
      if (contentType === 'application/json') return void res.writeHead(200, {'content-type': 'application/json'}).end('{}')
      res.writeHead(200, {'content-type': 'application/x-protobuf'}).end(Buffer.from(Response.encode(Response.create({})).finish()))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans: () => requests.flatMap((r) => r.spans),
    nextRequest: () => new Promise((resolve) => waiters.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/**
 * A collector that accepts connections and requests but never answers: the worst case for an
 * exporter (each export waits for its timeout). `close` drops the connections.
 */
export async function startStalledReceiver(): Promise<{url: string; requests: () => number; close(): Promise<void>}> {
  let requests = 0
  const server = createServer((req) => {
    requests++
    req.resume()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
