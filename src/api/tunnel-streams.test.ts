import {describe, expect, it} from 'vitest'
import {StreamTable} from './tunnel-streams.js'

describe('StreamTable', () => {
  it('routes data and resize to the stream of an ID, and ends it once', () => {
    const t = new StreamTable()
    const s = t.open(1)
    const got: string[] = []
    s.onData((d) => got.push(d.toString()))
    s.onResize((c, r) => got.push(`${c}x${r}`))
    const closes: unknown[] = []
    s.onClose((e) => closes.push(e ?? 'clean'))
    t.get(1)!.emitData(Buffer.from('hi'))
    t.get(1)!.emitResize(80, 24)
    expect(t.end(1, {code: 'x', message: 'gone'})).toBe(s)
    expect(t.end(1)).toBeUndefined()
    expect(got).toEqual(['hi', '80x24'])
    expect(closes).toEqual([{code: 'x', message: 'gone'}])
    expect(s.closed).toBe(true)
  })

  it("gives the first data listener what arrived before it (an attach's first screen), then live data to all", () => {
    const t = new StreamTable()
    const s = t.open(2)
    t.get(2)!.emitData(Buffer.from('screen '))
    t.get(2)!.emitData(Buffer.from('so far '))
    const first: string[] = []
    const second: string[] = []
    s.onData((d) => first.push(d.toString()))
    s.onData((d) => second.push(d.toString()))
    t.get(2)!.emitData(Buffer.from('live'))
    expect(first.join('')).toBe('screen so far live')
    expect(second.join('')).toBe('live')
  })

  it('calls a close listener added after the end at once', () => {
    const t = new StreamTable()
    const s = t.open(2)
    t.end(2)
    let called = false
    s.onClose(() => (called = true))
    expect(called).toBe(true)
  })

  it('endAll ends every stream with the same error', () => {
    const t = new StreamTable()
    const errs: unknown[] = []
    for (const sid of [1, 2, 3]) t.open(sid).onClose((e) => errs.push(e))
    t.endAll({code: 'broker_unavailable', message: 'down'})
    expect(errs).toHaveLength(3)
    expect(t.get(1)).toBeUndefined()
  })
})
