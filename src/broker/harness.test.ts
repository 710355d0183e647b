import {describe, expect, it} from 'vitest'
import {BUILTIN_HARNESS_TYPES} from '../api/harness-types.js'
import {mergeResources, resolveHarness} from './harness.js'
import {HARNESSES} from './harnesses/registry.js'

describe('harness configs', () => {
  it('the built-in shell runs bash with a short prompt and default resources', () => {
    const h = resolveHarness('shell', {task: 'ignored on the command line'})
    expect(h.command).toEqual(['/bin/bash', '--noprofile', '--norc', '-i'])
    expect(h.env).toEqual({PS1: '$ '})
    expect(h.resources).toEqual({cpu: '1', memory: '2Gi', disk: '10Gi', gpu: 0})
    expect(h.taskInCommand).toBe(false)
  })

  it('settings configs: args, positional task or task_flag, env, image, merged resources', () => {
    const configs = {
      claude: {harness: 'claude', image: 'reg/claude:1', args: ['--verbose'], env: {A: '1'}, resources: {memory: '4Gi'}},
      gem: {harness: 'gemini', task_flag: '--prompt', resources: {gpu: 1}},
    }
    const c = resolveHarness('claude', {configs, task: 'fix the bug', defaultResources: {cpu: '2'}})
    expect(c).toMatchObject({harness: 'claude', image: 'reg/claude:1', command: ['claude', '--verbose', 'fix the bug'], env: {A: '1'}, taskInCommand: true})
    expect(c.resources).toEqual({cpu: '2', memory: '4Gi', disk: '10Gi', gpu: 0})
    const g = resolveHarness('gem', {configs, task: 'hello', override: {env: {B: '2'}}, resources: {cpu: '500m'}})
    expect(g.command).toEqual(['gemini', '--prompt', 'hello'])
    expect(g.env).toEqual({B: '2'})
    expect(g.resources).toEqual({cpu: '500m', memory: '2Gi', disk: '10Gi', gpu: 1})
  })

  it('the built-in harness types of the API are the registry\'s modules', () => {
    expect([...BUILTIN_HARNESS_TYPES].sort()).toEqual(Object.keys(HARNESSES).sort())
  })

  it('clear errors for unknown configs and bad values', () => {
    expect(() => resolveHarness('nope', {configs: {x: {harness: 'x'}}})).toThrow(/harness config "nope" is not defined \(known: .*shell.*x\)/)
    expect(() => resolveHarness('x', {configs: {x: {harness: ''}}})).toThrow(/has no `harness` type/)
    expect(() => mergeResources({memory: 'lots'})).toThrow(/is not a size/)
    expect(() => mergeResources({cpu: '0'})).toThrow(/more than zero/)
    expect(() => mergeResources({gpu: -1})).toThrow(/whole number/)
  })
})
