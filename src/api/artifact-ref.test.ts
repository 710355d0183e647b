import {describe, expect, it} from 'vitest'
import {formatArtifactRef, parseArtifactRef} from './artifact-ref.js'

const ID = '05e7187b-f392-4f68-8525-737508558ad0'

describe('artifact references', () => {
  it.each([
    [`svc://artifact/${ID}`, {id: ID}],
    [`svc://artifact/${ID}@3`, {id: ID, seq: 3}],
    [ID, {id: ID}],
    [`${ID}@12`, {id: ID, seq: 12}],
    [`  ${ID}  `, {id: ID}],
  ])('parses %s', (raw, want) => {
    expect(parseArtifactRef(raw)).toEqual(want)
  })
  it.each(['', 'svc://artifact/', `svc://agent/${ID}`, `https://x/${ID}`, `${ID}@0`, `${ID}@-1`, `${ID}@x`, 'a/b', '../etc', `svc://artifact/${ID}@`])('refuses %j', (raw) => {
    expect(parseArtifactRef(raw)).toBeNull()
  })
  it('formats both forms', () => {
    expect(formatArtifactRef(ID)).toBe(`svc://artifact/${ID}`)
    expect(formatArtifactRef(ID, 2)).toBe(`svc://artifact/${ID}@2`)
  })
})
