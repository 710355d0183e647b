import {OTLPExporterBase, type OTLPExporterNodeConfigBase} from '@opentelemetry/otlp-exporter-base'
import {convertLegacyHttpOptions, createOtlpHttpExportDelegate} from '@opentelemetry/otlp-exporter-base/node-http'
import {ProtobufTraceSerializer, TraceExporterMetricsHelper} from '@opentelemetry/otlp-transformer'
import type {ReadableSpan} from '@opentelemetry/sdk-trace-base'

/**
 * OTLP/HTTP with protobuf bodies (`http/protobuf`, the OTLP default encoding every collector
 * accepts). The installed exporter-trace-otlp-http sends JSON; this is what the SDK's
 * exporter-trace-otlp-proto package does, built from the same two packages it depends on.
 */
export class OtlpHttpProtoTraceExporter extends OTLPExporterBase<ReadableSpan[]> {
  constructor(config: OTLPExporterNodeConfigBase) {
    super(
      createOtlpHttpExportDelegate(
        convertLegacyHttpOptions(config, 'TRACES', 'v1/traces', {'Content-Type': 'application/x-protobuf'}),
        ProtobufTraceSerializer,
        'otlp_http_span_exporter',
        TraceExporterMetricsHelper,
        undefined,
      ),
    )
  }
}
