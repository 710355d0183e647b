import {describe, expect, it} from 'vitest'
import {agentSettingsFromTree, BUILTIN_HARNESS_CONFIGS} from './agent-settings.js'

describe('agent settings from the settings tree', () => {
  it('a harness config named after a built-in harness is of that type unless it says otherwise (the Hub sends it so to brokers)', () => {
    const {harnessConfigs} = agentSettingsFromTree({harness_configs: {claude: {env: {ANTHROPIC_BASE_URL: 'http://gw'}}, codex: {harness: 'shell'}, mine: {harness: 'gemini'}}})
    expect(harnessConfigs.claude).toEqual({harness: 'claude', env: {ANTHROPIC_BASE_URL: 'http://gw'}})
    expect(harnessConfigs.codex).toEqual({harness: 'shell'})
    expect(harnessConfigs.mine).toEqual({harness: 'gemini'})
    // The built-ins nobody changed are there as they are.
    expect(harnessConfigs.gemini).toBe(BUILTIN_HARNESS_CONFIGS.gemini)
    expect(Object.keys(harnessConfigs).sort()).toEqual(['claude', 'codex', 'gemini', 'mine', 'opencode', 'shell'])
  })
})
