import {appendFile} from 'node:fs/promises'
import {ExportResultCode, hrTimeToMilliseconds, type ExportResult} from '@opentelemetry/core'
import type {ReadableSpan, SpanExporter} from '@opentelemetry/sdk-trace-base'
import type {TelemetryConfig} from './config.js'
import type {Attributes, TelemetryEvent} from './filter.js'

/** A span back as the event it was made from (local files and hub reports carry events). */
export function eventOf(span: ReadableSpan): TelemetryEvent {
  return {type: span.name, time: Math.round(hrTimeToMilliseconds(span.startTime)), attributes: {...span.attributes} as Attributes}
}

/**
 * An exporter that hands events to a function; the batch fails when the promise rejects. Used for
 * local output and for hub reporting (a broker's events sent to the Hub over its tunnel).
 */
export class EventExporter implements SpanExporter {
  constructor(private readonly send: (events: TelemetryEvent[], spans: ReadableSpan[]) => Promise<void> | void) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    Promise.resolve()
      .then(() => this.send(spans.map(eventOf), spans))
      .then(
        () => done({code: ExportResultCode.SUCCESS}),
        (error: Error) => done({code: ExportResultCode.FAILED, error}),
      )
  }

  async shutdown(): Promise<void> {}
}

/** One JSON line per event: time (ISO), type, attributes and the resource attributes. */
export function jsonLine(span: ReadableSpan): string {
  const e = eventOf(span)
  return JSON.stringify({time: new Date(e.time).toISOString(), type: e.type, attributes: e.attributes, resource: span.resource.attributes}) + '\n'
}

/** `local` sink: appends JSON lines to `local.file` and/or writes them to stderr (`local.console`). */
export function localExporter(local: TelemetryConfig['local'], stderr: {write(text: string): unknown} = process.stderr): EventExporter {
  return new EventExporter(async (_events, spans) => {
    const text = spans.map(jsonLine).join('')
    if (local.console) stderr.write(text)
    if (local.file) await appendFile(local.file, text, {mode: 0o600})
  })
}

/**
 * The OTLP URL of `cloud.endpoint`: a bare `host:port` gets `https://` (or `http://` without TLS),
 * and an HTTP endpoint with no path gets the standard `/v1/traces`.
 */
export function otlpUrl(cloud: TelemetryConfig['cloud']): string {
  const raw = cloud.endpoint ?? ''
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `${cloud.tls.enabled ? 'https' : 'http'}://${raw}`
  if (cloud.protocol === 'grpc') return withScheme
  const u = new URL(withScheme)
  if (u.pathname === '' || u.pathname === '/') u.pathname = '/v1/traces'
  return u.toString()
}

/**
 * `cloud` sink: OTLP over HTTP (protobuf) or gRPC (the SDK's exporter), with the configured headers
 * and TLS. The gRPC exporter is imported only when used (it pulls in @grpc/grpc-js). Without
 * `timeoutMillis` the SDK's export timeout applies (10 s, retries included, or OTEL_EXPORTER_OTLP_*_TIMEOUT).
 */
export async function cloudExporter(cloud: TelemetryConfig['cloud'], timeoutMillis?: number): Promise<SpanExporter> {
  const url = otlpUrl(cloud)
  if (cloud.protocol === 'http') {
    const {OtlpHttpProtoTraceExporter} = await import('./otlp-http-proto.js')
    return new OtlpHttpProtoTraceExporter({url, headers: cloud.headers, timeoutMillis, httpAgentOptions: {rejectUnauthorized: !cloud.tls.insecureSkipVerify}})
  }
  const [{OTLPTraceExporter}, grpc] = await Promise.all([import('@opentelemetry/exporter-trace-otlp-grpc'), import('@grpc/grpc-js')])
  const metadata = new grpc.Metadata()
  for (const [k, v] of Object.entries(cloud.headers)) metadata.set(k, v)
  const credentials = !cloud.tls.enabled
    ? grpc.credentials.createInsecure()
    : grpc.credentials.createSsl(null, null, null, cloud.tls.insecureSkipVerify ? {rejectUnauthorized: false, checkServerIdentity: () => undefined} : {})
  return new OTLPTraceExporter({url, metadata, credentials, timeoutMillis})
}
