import {describe, expect, it} from 'vitest'
import {missingNeeds, secretNeeds} from './harness-needs.js'

describe('the secrets a harness config needs', () => {
  it("its auth type's key first, then its own entries; a value in its env satisfies a need", () => {
    const cfg = {harness: 'claude', env: {ANTHROPIC_API_KEY: 'sk-from-env'}, secrets: [{key: 'DEPLOY_TOKEN', description: 'deploys'}, {key: 'gcp.json', type: 'file', target: '~/.config/gcp.json'}]}
    const needs = secretNeeds('c', cfg)
    expect(needs.map((n) => [n.key, n.type])).toEqual([['ANTHROPIC_API_KEY', 'environment'], ['DEPLOY_TOKEN', 'environment'], ['gcp.json', 'file']])
    expect(missingNeeds(needs, cfg, new Set(['gcp.json'])).map((n) => n.key)).toEqual(['DEPLOY_TOKEN'])
  })

  it('refuses, before anything is made, a key that cannot be an environment variable unless the secret is a file', () => {
    for (const key of ['DEPLOY.TOKEN', 'deploy-token']) {
      expect(() => secretNeeds('c', {harness: 'shell', secrets: [{key}]})).toThrow(/secret .* reaches the harness's environment, so its key must be a variable name/)
      expect(() => secretNeeds('c', {harness: 'shell', secrets: [key]})).toThrow(/must be a variable name/)
    }
    expect(() => secretNeeds('c', {harness: 'shell', secrets: [{key: '1TOKEN'}]})).toThrow(/needs a `key`/)
    expect(secretNeeds('c', {harness: 'shell', secrets: [{key: 'deploy-key.pem', type: 'file', target: '~/.ssh/id'}]})).toEqual([{key: 'deploy-key.pem', description: '', type: 'file', target: '~/.ssh/id'}])
    expect(() => secretNeeds('c', {harness: 'claude', auth_selected_type: 'nope'})).toThrow(/auth_selected_type "nope" is not one of api-key/)
    // OpenCode with a provider of its config's own that takes no key: nothing is asked for.
    expect(secretNeeds('c', {harness: 'opencode', auth_selected_type: 'none'})).toEqual([])
    expect(secretNeeds('c', {harness: 'opencode'}).map((n) => n.key)).toEqual(['ANTHROPIC_API_KEY'])
  })
})
