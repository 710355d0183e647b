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
})
