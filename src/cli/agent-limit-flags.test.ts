import {describe, expect, it} from 'vitest'
import {limitsFromFlags} from './agent-limits-body.js'

describe('svc agent create --max-* as limits', () => {
  it('maps each flag to its limit; none given is no limits', () => {
    expect(limitsFromFlags({})).toBeUndefined()
    expect(limitsFromFlags({'max-turns': 5, 'max-model-calls': 20, 'max-duration': '45m', 'max-cost': '2.50', 'max-children': 0, 'max-depth': 1})).toEqual({
      maxTurns: 5,
      maxModelCalls: 20,
      maxDurationSeconds: 2700,
      maxCostUsd: 2.5,
      maxChildren: 0,
      maxDepth: 1,
    })
  })

  it('takes a duration or plain seconds, and a cost with or without $', () => {
    expect(limitsFromFlags({'max-duration': '90'})).toEqual({maxDurationSeconds: 90})
    expect(limitsFromFlags({'max-duration': '1h30m'})).toEqual({maxDurationSeconds: 5400})
    expect(limitsFromFlags({'max-cost': '$3'})).toEqual({maxCostUsd: 3})
  })

  it('refuses what is not a duration or an amount (usage_error)', () => {
    for (const f of [{'max-duration': 'soon'}, {'max-duration': '500ms'}, {'max-cost': 'lots'}, {'max-cost': '-1'}, {'max-cost': ' '}]) {
      expect(() => limitsFromFlags(f), JSON.stringify(f)).toThrow(expect.objectContaining({code: 'usage_error'}))
    }
  })
})

describe('svc agent get: Limits', () => {
  const none = {maxTurns: null, maxModelCalls: null, maxDurationSeconds: null, maxCostUsd: null, maxChildren: null, maxDepth: null}
  it('lists the limits that apply, none without any', async () => {
    const {limitsText} = await import('./agent-render.js')
    expect(limitsText({limits: none} as never)).toBeNull()
    expect(limitsText({limits: {...none, maxTurns: 10, maxCostUsd: 5, maxDepth: 2}} as never)).toBe('10 turns, $5.00, depth 2 (with its descendants)')
  })
})
