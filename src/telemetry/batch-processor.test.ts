import {ExportResultCode, type ExportResult} from '@opentelemetry/core'
import type {ReadableSpan, SpanExporter} from '@opentelemetry/sdk-trace-base'
import {describe, expect, it} from 'vitest'
import {DropOldestBatchProcessor} from './batch-processor.js'

/** An exporter whose exports stay pending until the test releases them (a stuck collector). */
function gatedExporter() {
  const batches: string[][] = []
  const pending: Array<() => void> = []
  const exporter: SpanExporter = {
    export(spans: ReadableSpan[], done: (r: ExportResult) => void) {
      batches.push(spans.map((s) => s.name))
      pending.push(() => done({code: ExportResultCode.SUCCESS}))
    },
    shutdown: async () => {},
  }
  const releaseAll = async () => {
    while (pending.length) {
      pending.shift()!()
      await new Promise((r) => setImmediate(r))
    }
  }
  return {exporter, batches, releaseAll}
}

const span = (name: string) => ({name}) as ReadableSpan

describe('DropOldestBatchProcessor', () => {
  it('never waits on a stuck exporter and keeps the newest spans when its queue is full', async () => {
    const g = gatedExporter()
    const p = new DropOldestBatchProcessor(g.exporter, {maxBatch: 2, delayMs: 60_000, maxQueue: 4})
    for (let i = 0; i < 10; i++) p.onEnd(span(`s${i}`))
    // s0 and s1 left in the first batch, which is stuck; of s2..s9 the four newest wait.
    expect(g.batches).toEqual([['s0', 's1']])
    expect(p.stats).toMatchObject({dropped: 4, queued: 4})
    const flushed = p.forceFlush()
    await g.releaseAll()
    await flushed
    expect(g.batches).toEqual([['s0', 's1'], ['s6', 's7'], ['s8', 's9']])
    expect(p.stats).toMatchObject({exported: 6, dropped: 4, queued: 0})
  })

  it('counts failed batches and drops nothing while the queue has room', async () => {
    const exporter: SpanExporter = {export: (_s, done) => done({code: ExportResultCode.FAILED}), shutdown: async () => {}}
    const p = new DropOldestBatchProcessor(exporter, {maxBatch: 3, delayMs: 60_000, maxQueue: 12})
    for (let i = 0; i < 5; i++) p.onEnd(span(`s${i}`))
    await p.forceFlush()
    expect(p.stats).toMatchObject({exported: 0, failed: 5, dropped: 0, queued: 0})
  })
})
