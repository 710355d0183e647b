import {describe, expect, it} from 'vitest'
import {commandIdsOf} from './command-ids.js'

// Which command classes the dev bundle imports before oclif runs (scripts/dev-lazy-registry.mjs):
// the one argv names, or undefined (all of them) when it names none.
describe('commandIdsOf', () => {
  const ids = ['agent:create', 'agent:list', 'status', 'project:settings:get', 'help']
  it.each([
    [['agent', 'create', 'x', '--harness', 'claude', 'do it'], ['agent:create']],
    [['agent:create', 'x'], ['agent:create']],
    [['status', 'thinking'], ['status']],
    [['project', 'settings', 'get', '--json'], ['project:settings:get']],
    [['help', 'agent', 'create'], ['help', 'agent:create']],
    [['help'], ['help']],
    [['help', 'agent'], undefined],
    [['agent'], undefined],
    [['agent', 'lst'], undefined],
    [['--help'], undefined],
    [[], undefined],
  ])('%j -> %j', (argv, expected) => {
    expect(commandIdsOf(argv, ids)).toEqual(expected)
  })
})
