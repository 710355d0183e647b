import {describe, expect, it} from 'vitest'
import {NonceCache} from './broker-signing.js'

describe('NonceCache', () => {
  const W = 1000

  it('accepts a nonce once within the window and again after it', () => {
    const c = new NonceCache(W)
    expect(c.accept('n', 0)).toBe(true)
    expect(c.accept('n', W - 1)).toBe(false)
    expect(c.accept('n', W)).toBe(true)
    expect(c.accept('n', W + 1)).toBe(false)
  })

  it('drops expired nonces as time passes, without waiting for the cache to grow large', () => {
    const c = new NonceCache(W)
    let most = 0
    let refused = 0
    // A steady flood: one nonce every 10 ms for 20k requests; only the last window's stay.
    for (let i = 0; i < 20_000; i++) {
      if (!c.accept(`n${i}`, i * 10)) refused++
      most = Math.max(most, c.size)
    }
    expect(refused).toBe(0)
    expect(most).toBe(W / 10)
    expect(c.accept('n19999', 19_999 * 10 + 5)).toBe(false)
  })

  it('drops from the oldest end only what expired', () => {
    const c = new NonceCache(W)
    c.accept('a', 0)
    c.accept('b', 1)
    c.accept('c', 2)
    expect(c.accept('d', W + 1)).toBe(true)
    // a and b expired (W and W - 0 ago), c is 1 ms short of it.
    expect(c.size).toBe(2)
    expect(c.accept('c', W + 1)).toBe(false)
  })

  it('a nonce accepted again after its window moves to the back, so what expired behind it is not kept', () => {
    const c = new NonceCache(W)
    c.accept('late', 100)
    // The clock stepped back: these were inserted after `late` with older times.
    c.accept('a', 0)
    c.accept('b', 5)
    // a's window is over (a replay may be accepted again), b's too; `late` still holds the front.
    expect(c.accept('a', W + 50)).toBe(true)
    expect(c.size).toBe(3)
    // Once `late` expires, b (expired) goes with it; a, re-accepted at W + 50, stays.
    expect(c.accept('z', W + 150)).toBe(true)
    expect(c.size).toBe(2)
    expect(c.accept('a', W + 150)).toBe(false)
  })
})
