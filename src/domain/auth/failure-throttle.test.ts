import {expect, it} from 'vitest'
import {AuthFailureThrottle} from './failure-throttle.js'

it('an address is throttled after max failures and released when its window ends', () => {
  let now = 0
  const t = new AuthFailureThrottle(2, 60_000, () => now)
  t.fail('a')
  expect(() => t.check('a')).not.toThrow()
  t.fail('a')
  expect(() => t.check('a')).toThrow(expect.objectContaining({code: 'quota_exceeded', status: 429, details: expect.objectContaining({retryAfterSeconds: 60})}))
  expect(() => t.check('b')).not.toThrow()
  now = 59_000
  expect(() => t.check('a')).toThrow(expect.objectContaining({details: expect.objectContaining({retryAfterSeconds: 1})}))
  now = 60_000
  expect(() => t.check('a')).not.toThrow()
})
