import {describe, expect, it} from 'vitest'
import {attemptPlan} from './attempts.js'

const base = {name: 'fix', projectId: 'p'}

describe('attemptPlan', () => {
  it('names the attempts <name>-1..N and takes the harnesses in turn', () => {
    expect(attemptPlan({...base, attempts: 3, harnessConfigs: ['claude', 'codex']})).toEqual([
      {name: 'fix-1', harnessConfig: 'claude'},
      {name: 'fix-2', harnessConfig: 'codex'},
      {name: 'fix-3', harnessConfig: 'claude'},
    ])
    expect(attemptPlan({...base, attempts: 2, harnessConfig: 'shell'}).map((p) => p.harnessConfig)).toEqual(['shell', 'shell'])
    expect(attemptPlan({...base, attempts: 1})).toEqual([{name: 'fix-1', harnessConfig: undefined}])
    expect(attemptPlan(base)).toEqual([])
  })

  it('refuses what cannot be planned', () => {
    const bad = (input: object) => {
      try {
        attemptPlan({...base, ...input})
      } catch (err) {
        return (err as {code: string}).code
      }
      return 'accepted'
    }
    expect(bad({attempts: 0})).toBe('validation_error')
    expect(bad({attempts: 21})).toBe('validation_error')
    expect(bad({attempts: 2.5})).toBe('validation_error')
    expect(bad({harnessConfigs: ['shell']})).toBe('validation_error')
    expect(bad({attempts: 2, harnessConfigs: []})).toBe('validation_error')
    expect(bad({attempts: 2, harnessConfigs: ['a', 'b', 'c']})).toBe('validation_error')
    expect(bad({attempts: 2, harnessConfig: 'a', harnessConfigs: ['a']})).toBe('validation_error')
    expect(bad({name: 'x'.repeat(61), attempts: 10})).toBe('validation_error')
    expect(bad({name: 'x'.repeat(61), attempts: 9})).toBe('accepted')
  })
})
