import {describe, expect, it} from 'vitest'
import {decideApprover} from './approval-authz.js'
import {globRegExp, ruleDecision, rulesOf} from './rules.js'

describe('approvals.rules', () => {
  const req = (summary: string, tool = 'Bash', harness = 'claude') => ({harness, tool, summary})

  it('matches the whole summary with a glob; * any characters, ? one, nothing else special', () => {
    expect(globRegExp('npm test*').test('npm test -- --watch=false')).toBe(true)
    expect(globRegExp('npm test*').test('xnpm test')).toBe(false)
    expect(globRegExp('git status').test('git status; rm -rf /')).toBe(false)
    expect(globRegExp('a.b?').test('a.bc')).toBe(true)
    expect(globRegExp('a.b?').test('axbc')).toBe(false)
    expect(globRegExp('(x)[y]$').test('(x)[y]$')).toBe(true)
  })

  it('deny wins over allow whatever their order; the index is the rule\'s place in the setting', () => {
    const rules = rulesOf({approvals: {rules: [{tool: 'Bash', match: 'npm *', decision: 'allow'}, {bogus: true}, {tool: '*', match: '*--force*', decision: 'deny'}]}})
    expect(ruleDecision(rules, req('npm test'))).toEqual({index: 0, decision: 'allow'})
    expect(ruleDecision(rules, req('npm publish --force'))).toEqual({index: 2, decision: 'deny'})
    expect(ruleDecision(rules, req('make'))).toBeNull()
    expect(ruleDecision(rules, req('npm test', 'Edit'))).toBeNull()
  })

  it('a rule with a harness matches only that harness', () => {
    const rules = rulesOf({approvals: {rules: [{harness: 'codex', tool: 'Bash', decision: 'allow'}]}})
    expect(ruleDecision(rules, req('ls', 'Bash', 'claude'))).toBeNull()
    expect(ruleDecision(rules, req('ls', 'Bash', 'codex'))).toEqual({index: 0, decision: 'allow'})
    expect(rulesOf(null)).toEqual([])
  })
})

describe('who decides an approval (pure)', () => {
  const agent = {id: 'a1', parentId: 'lead'}
  const user = (id = 'u1') => ({kind: 'user' as const, id})
  const table: Array<[string, Parameters<typeof decideApprover>[0], boolean]> = [
    ['the owner', {principal: user(), agent, owner: true, lifecycle: false}, true],
    ['a lifecycle holder', {principal: user(), agent, owner: false, lifecycle: true}, true],
    ['a person with neither', {principal: user(), agent, owner: false, lifecycle: false}, false],
    ['the parent agent', {principal: {kind: 'agent', id: 'lead'}, agent, owner: false, lifecycle: false}, true],
    ['the agent itself', {principal: {kind: 'agent', id: 'a1'}, agent, owner: false, lifecycle: true}, false],
    ['another agent', {principal: {kind: 'agent', id: 'sibling'}, agent, owner: false, lifecycle: false}, false],
    ['any agent, for a root agent', {principal: {kind: 'agent', id: 'lead'}, agent: {id: 'a1', parentId: null}, owner: false, lifecycle: false}, false],
    ['a broker', {principal: {kind: 'broker', id: 'b'}, agent, owner: false, lifecycle: false}, false],
  ]
  for (const [who, facts, allowed] of table) it(`${who}: ${allowed ? 'may' : 'may not'}`, () => expect(decideApprover(facts).allowed).toBe(allowed))
})
