import {describe, expect, it} from 'vitest'
import {agentConfigFacts, agentConfigFactsOfText} from './agent-config-facts.js'

const UNREADABLE = {appliedRole: null, assignModeServiceAccount: false, readable: false}
const PLAIN = {appliedRole: null, assignModeServiceAccount: false, readable: true}
const assign = (account: unknown, mode: unknown = 'Assign') => JSON.stringify({applied: {defaultCloudIdentityMode: {value: mode}, defaultCloudIdentityServiceAccountId: {value: account}}})

describe('agentConfigFacts', () => {
  it.each([
    ['not JSON', '{broken', UNREADABLE],
    ['null', 'null', UNREADABLE],
    ['an array', '[1]', UNREADABLE],
    ['a string', '"text"', UNREADABLE],
    ['an applied that is null', '{"applied":null}', UNREADABLE],
    ['an applied that is an array', '{"applied":[]}', UNREADABLE],
    ['an applied that is a string', '{"applied":"x"}', UNREADABLE],
    ['an empty object', '{}', PLAIN],
    ['an empty applied', '{"applied":{}}', PLAIN],
    ['an applied role that is not a string', '{"applied":{"defaultAgentRole":{"value":5}}}', PLAIN],
    ['an applied role without a value', '{"applied":{"defaultAgentRole":"full"}}', PLAIN],
    ['an applied role', '{"applied":{"defaultAgentRole":{"value":"readonly"}}}', {...PLAIN, appliedRole: 'readonly'}],
    ['Assign without an account', '{"applied":{"defaultCloudIdentityMode":{"value":"Assign"}}}', PLAIN],
    ['Assign with an empty account', assign(''), PLAIN],
    ['Assign with an account that is not a string', assign(7), PLAIN],
    ['another mode with an account', assign('sa@x', 'assign'), PLAIN],
    ['Assign with an account', assign('sa@x'), {...PLAIN, assignModeServiceAccount: true}],
  ])('a config with %s', (_what, raw, expected) => {
    expect(agentConfigFactsOfText(raw)).toEqual(expected)
    // The object form (what agent creation holds) decides the same wherever the text parses.
    if (expected.readable) expect(agentConfigFacts(JSON.parse(raw))).toEqual(expected)
  })

  it('reads a config as agent creation writes it', () => {
    const config = {applied: {defaultAgentRole: {value: 'baseline', source: 'hub'}, defaultCloudIdentityMode: {value: 'Assign'}, defaultCloudIdentityServiceAccountId: {value: 'sa-1'}}, telemetry: {enabled: true}}
    expect(agentConfigFacts(config)).toEqual({appliedRole: 'baseline', assignModeServiceAccount: true, readable: true})
  })
})
