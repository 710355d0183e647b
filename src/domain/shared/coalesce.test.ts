import {describe, expect, it} from 'vitest'
import {coalescePerKey} from './coalesce.js'

describe('coalescePerKey', () => {
  it('a burst during a run shares one next run, started after the first settled; keys apart run apart', async () => {
    const log: string[] = []
    const gates: Array<() => void> = []
    const call = coalescePerKey(async (key: string) => {
      log.push(`start ${key}`)
      await new Promise<void>((r) => gates.push(r))
      log.push(`end ${key}`)
    })
    const first = call('a')
    const burst = [call('a'), call('a'), call('a')]
    const other = call('b')
    expect(log).toEqual(['start a', 'start b'])
    expect(burst[0]).toBe(burst[1])
    gates.shift()!()
    await first
    // The shared run starts only once the first has ended.
    await new Promise((r) => setImmediate(r))
    expect(log).toEqual(['start a', 'start b', 'end a', 'start a'])
    gates.shift()!()
    await other
    gates.shift()!()
    await Promise.all(burst)
    expect(log.filter((l) => l === 'start a')).toHaveLength(2)
    // Free again: a later call runs at once.
    const later = call('a')
    expect(log.at(-1)).toBe('start a')
    gates.shift()!()
    await later
  })

  it('a failed run rejects its own callers only; the next run still happens', async () => {
    let n = 0
    let release: () => void = () => {}
    const call = coalescePerKey(async () => {
      n += 1
      if (n === 1) {
        await new Promise<void>((r) => (release = r))
        throw new Error('first failed')
      }
    })
    const first = call('k')
    const next = call('k')
    release()
    await expect(first).rejects.toThrow('first failed')
    await expect(next).resolves.toBeUndefined()
    expect(n).toBe(2)
  })
})
