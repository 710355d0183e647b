import {execFileSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import {createServer as createHttpsServer} from 'node:https'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {gunzipSync} from 'node:zlib'
import * as grpc from '@grpc/grpc-js'
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
  /** `application/x-protobuf`, `application/json`, or `grpc`. */
  contentType: string
  /** HTTP headers, or gRPC metadata. */
  headers: IncomingHttpHeaders | Record<string, unknown>
  spans: ReceivedSpan[]
}

export interface OtlpReceiver {
  /** `http(s)://127.0.0.1:<port>` (an HTTP exporter appends `/v1/traces`); gRPC: `127.0.0.1:<port>`. */
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

/** The requests a receiver decoded, and a way to wait for the next one. */
function recorder() {
  const requests: ReceivedRequest[] = []
  const waiters: Array<(r: ReceivedRequest) => void> = []
  return {
    requests,
    record(received: ReceivedRequest) {
      requests.push(received)
      for (const w of waiters.splice(0)) w(received)
    },
    view: {
      requests,
      spans: () => requests.flatMap((r) => r.spans),
      nextRequest: () => new Promise<ReceivedRequest>((resolve) => waiters.push(resolve)),
    },
  }
}

const decodeOptions = {longs: String, bytes: String, defaults: false}

/**
 * A real OTLP/HTTP trace receiver on loopback: POST /v1/traces with a protobuf
 * (`application/x-protobuf`, decoded with protobufjs and otlp-trace.proto) or JSON
 * (`application/json`) ExportTraceServiceRequest, gzip or not. Anything else is 404/415.
 * With `tls` it serves HTTPS with that key and certificate.
 */
export async function startOtlpReceiver(opts: {tls?: TestCert} = {}): Promise<OtlpReceiver> {
  const rec = recorder()
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end()
      let body = Buffer.concat(chunks)
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body)
      const contentType = String(req.headers['content-type'] ?? '').split(';')[0].trim()
      let decoded: unknown
      try {
        if (contentType === 'application/x-protobuf') decoded = Request.toObject(Request.decode(body), decodeOptions)
        else if (contentType === 'application/json') decoded = JSON.parse(body.toString('utf8'))
        else return void res.writeHead(415).end()
      } catch {
        return void res.writeHead(400).end()
      }
      rec.record({contentType, headers: req.headers, spans: spansOf(decoded)})
      if (contentType === 'application/json') return void res.writeHead(200, {'content-type': 'application/json'}).end('{}')
      res.writeHead(200, {'content-type': 'application/x-protobuf'}).end(Buffer.from(Response.encode(Response.create({})).finish()))
    })
  }
  const server: Server = opts.tls ? (createHttpsServer({key: opts.tls.key, cert: opts.tls.cert}, handler) as unknown as Server) : createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  return {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    ...rec.view,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** The OTLP gRPC TraceService on loopback (plain, or TLS with `tls`), decoding with the same .proto. */
export async function startOtlpGrpcReceiver(opts: {tls?: TestCert} = {}): Promise<OtlpReceiver> {
  const rec = recorder()
  const server = new grpc.Server()
  const service: grpc.ServiceDefinition = {
    Export: {
      path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
      requestStream: false,
      responseStream: false,
      requestSerialize: (v: protobuf.Message) => Buffer.from(Request.encode(v).finish()),
      requestDeserialize: (b: Buffer) => Request.decode(b),
      responseSerialize: (v: protobuf.Message) => Buffer.from(Response.encode(v).finish()),
      responseDeserialize: (b: Buffer) => Response.decode(b),
    },
  }
  server.addService(service, {
    Export: (call: grpc.ServerUnaryCall<protobuf.Message, unknown>, done: grpc.sendUnaryData<protobuf.Message>) => {
      rec.record({contentType: 'grpc', headers: call.metadata.getMap(), spans: spansOf(Request.toObject(call.request, decodeOptions))})
      done(null, Response.create({}))
    },
  })
  const creds = opts.tls ? grpc.ServerCredentials.createSsl(null, [{private_key: Buffer.from(opts.tls.key), cert_chain: Buffer.from(opts.tls.cert)}]) : grpc.ServerCredentials.createInsecure()
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', creds, (err, p) => (err ? reject(err) : resolve(p))))
  return {
    url: `127.0.0.1:${port}`,
    ...rec.view,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  }
}

export interface TestCert {
  key: string
  cert: string
}

/** A self-signed certificate for 127.0.0.1 made with openssl (the exporter must not trust it). */
export function selfSignedCert(): TestCert {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cert-'))
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=otlp-test', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], {stdio: 'ignore'})
    return {key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8')}
  } finally {
    rmSync(dir, {recursive: true, force: true})
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
