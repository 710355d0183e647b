import {describe, expect, it} from 'vitest'
import {iso, parseDuration} from './clock.js'

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['45s', 45_000],
    ['45m', 2_700_000],
    ['2h', 7_200_000],
    ['720h', 2_592_000_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['30d', 2_592_000_000],
    ['1h0m10s', 3_610_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms)
  })

  it.each(['', '10', 'h', '10x', '2 h', ' 2h', '2h ', '-5m', '1h-30m', 'abc', '2H'])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeNull()
  })
})

describe('iso', () => {
  it('is canonical UTC with milliseconds', () => {
    expect(iso(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)))).toBe('2026-01-02T03:04:05.006Z')
  })

  it('is exactly toISOString: within one second, across seconds, before 1970, past 9999', () => {
    const base = Date.UTC(2026, 10, 28, 3, 40, 12, 0)
    const times = [base, base + 1, base + 9, base + 10, base + 99, base + 100, base + 999, base + 1000, base + 5, base - 1, base + 86_400_000 + 7, 0, 1, 999, -1, -1001, -62_198_755_200_000, 253_402_300_799_999, 253_402_300_800_000, 8.64e15]
    // A walk with repeats and jumps, as a busy Hub stamps them.
    let t = base
    for (let i = 0; i < 5000; i++) times.push((t += [0, 1, 3, 250, 999, 1000, 60_000, -2000][i % 8]))
    for (const x of times) expect(iso(new Date(x)), String(x)).toBe(new Date(x).toISOString())
  })

  it('throws for an invalid date, as toISOString does', () => {
    iso(new Date(Date.UTC(2026, 0, 1)))
    expect(() => iso(new Date(Number.NaN))).toThrow(RangeError)
  })
})
