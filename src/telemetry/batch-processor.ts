import {ExportResultCode} from '@opentelemetry/core'
import type {Context} from '@opentelemetry/api'
import type {ReadableSpan, Span, SpanExporter, SpanProcessor} from '@opentelemetry/sdk-trace-base'

export interface BatchOptions {
  /** Spans per export (spec: 512 by default). */
  maxBatch: number
  /** A partial batch is exported after this long (spec: 5 s by default). */
  delayMs: number
  /** Spans held while waiting; past it the oldest are dropped. */
  maxQueue: number
}

export interface BatchStats {
  /** Spans handed to the exporter in batches that succeeded. */
  exported: number
  /** Spans dropped because the queue was full (oldest first). */
  dropped: number
  /** Spans in batches the exporter failed. */
  failed: number
  queued: number
}

/**
 * A batching span processor like the SDK's BatchSpanProcessor, with two differences that matter
 * here: a full queue drops its oldest spans (the SDK drops the newest, losing the most recent
 * events exactly when a collector comes back), and it counts what it drops. `onEnd` only pushes
 * into an array, so a request that records an event never waits on the exporter; at most one
 * export is in flight, and the next batch waits for it.
 */
export class DropOldestBatchProcessor implements SpanProcessor {
  private queue: ReadableSpan[] = []
  private timer: NodeJS.Timeout | null = null
  private inflight: Promise<void> | null = null
  private closed = false
  readonly stats: BatchStats = {exported: 0, dropped: 0, failed: 0, queued: 0}

  constructor(
    private readonly exporter: SpanExporter,
    private readonly opts: BatchOptions,
  ) {}

  onStart(_span: Span, _context: Context): void {}

  onEnd(span: ReadableSpan): void {
    if (this.closed) return
    this.queue.push(span)
    if (this.queue.length > this.opts.maxQueue) {
      const over = this.queue.length - this.opts.maxQueue
      this.queue.splice(0, over)
      this.stats.dropped += over
    }
    this.stats.queued = this.queue.length
    if (this.queue.length >= this.opts.maxBatch) void this.drain()
    else this.arm()
  }

  private arm() {
    if (this.timer || this.queue.length === 0) return
    this.timer = setTimeout(() => {
      this.timer = null
      void this.drain()
    }, this.opts.delayMs)
    this.timer.unref()
  }

  /** Exports batches until the queue is empty or only a partial batch is left (unless `all`). */
  private drain(all = false): Promise<void> {
    if (this.inflight) return this.inflight
    if (this.timer) {
      clearTimeout(this.timer)
      this.timer = null
    }
    this.inflight = (async () => {
      try {
        let first = true
        while (this.queue.length > 0 && (first || all || this.queue.length >= this.opts.maxBatch)) {
          first = false
          const batch = this.queue.splice(0, this.opts.maxBatch)
          this.stats.queued = this.queue.length
          await this.exportBatch(batch)
        }
      } finally {
        this.inflight = null
        this.arm()
      }
    })()
    return this.inflight
  }

  private exportBatch(batch: ReadableSpan[]): Promise<void> {
    return new Promise((resolve) => {
      try {
        this.exporter.export(batch, (result) => {
          if (result.code === ExportResultCode.SUCCESS) this.stats.exported += batch.length
          else this.stats.failed += batch.length
          resolve()
        })
      } catch {
        this.stats.failed += batch.length
        resolve()
      }
    })
  }

  /** Exports everything queued, waiting for an export in flight first. */
  async forceFlush(): Promise<void> {
    while (this.inflight || this.queue.length > 0) await (this.inflight ?? this.drain(true))
  }

  async shutdown(): Promise<void> {
    await this.forceFlush()
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    await this.exporter.shutdown()
  }
}
