import {describe, expect, it} from 'vitest'
import {AppError} from '../api/app-error.js'
import {exitCodeOf} from '../cli/exit-codes.js'
import {canPrompt, gatherRequiredSecrets, type RequiredSecret, type SecretPrompts} from './required-secrets.js'

const required: RequiredSecret[] = [
  {key: 'ANTHROPIC_API_KEY', description: 'API key of the harness', type: 'environment'},
  {key: 'GH_TOKEN', type: 'variable'},
  {key: 'GCP_CREDS', type: 'file', target: '/home/agent/creds.json'},
]

function fakePrompts(answers: Record<string, string>) {
  const asked: string[] = []
  const prompts: SecretPrompts = {
    async password({message, validate}) {
      asked.push(message)
      const key = message.split(' ')[0]
      expect(validate?.('')).not.toBe(true) // an empty answer is refused
      return answers[key]
    },
  }
  return {prompts, asked}
}

describe('gatherRequiredSecrets', () => {
  it('takes flags over the environment and asks only for what is missing', async () => {
    const {prompts, asked} = fakePrompts({GCP_CREDS: '{"type":"sa"}'})
    const got = await gatherRequiredSecrets(required, {flags: {GH_TOKEN: 'from-flag'}, env: {GH_TOKEN: 'from-env', ANTHROPIC_API_KEY: 'sk-env'}}, {canPrompt: true, prompts})
    expect(asked).toEqual(['GCP_CREDS'])
    expect(got).toEqual([
      {key: 'ANTHROPIC_API_KEY', type: 'environment', value: 'sk-env', source: 'environment'},
      {key: 'GH_TOKEN', type: 'variable', value: 'from-flag', source: 'flag'},
      {key: 'GCP_CREDS', type: 'file', target: '/home/agent/creds.json', value: '{"type":"sa"}', source: 'prompt'},
    ])
  })

  it('names the description in the prompt and defaults the type to environment', async () => {
    const {prompts, asked} = fakePrompts({TOKEN: 't'})
    const got = await gatherRequiredSecrets([{key: 'TOKEN', description: 'a token'} as RequiredSecret], {}, {canPrompt: true, prompts})
    expect(asked).toEqual(['TOKEN (a token)'])
    expect(got[0]).toMatchObject({type: 'environment', value: 't'})
  })

  it('without prompts, fails with interactive_required (exit 2) listing every missing key', async () => {
    const {prompts, asked} = fakePrompts({})
    let err: unknown
    try {
      await gatherRequiredSecrets(required, {env: {GH_TOKEN: 'x'}}, {canPrompt: false, prompts})
    } catch (e) {
      err = e
    }
    expect(asked).toEqual([])
    expect(err).toBeInstanceOf(AppError)
    const e = err as AppError
    expect(e.code).toBe('interactive_required')
    expect(e.details).toEqual({missing: ['ANTHROPIC_API_KEY', 'GCP_CREDS']})
    expect(e.message).toContain('ANTHROPIC_API_KEY (API key of the harness), GCP_CREDS')
    expect(exitCodeOf(e)).toBe(2)
  })

  it('needs nothing and asks nothing when every value is given; duplicates are asked once', async () => {
    const {prompts, asked} = fakePrompts({A: 'a'})
    expect(await gatherRequiredSecrets([{key: 'A', type: 'environment'}, {key: 'A', type: 'environment'}], {}, {canPrompt: true, prompts})).toHaveLength(1)
    expect(asked).toEqual(['A'])
    expect(await gatherRequiredSecrets([], {}, {canPrompt: false})).toEqual([])
  })

  it('prompts only on a terminal, without --json and without cli.interactive_disabled', () => {
    expect(canPrompt({json: false, interactiveDisabled: false, stdinIsTTY: true, stdoutIsTTY: true})).toBe(true)
    expect(canPrompt({json: true, interactiveDisabled: false, stdinIsTTY: true, stdoutIsTTY: true})).toBe(false)
    expect(canPrompt({json: false, interactiveDisabled: true, stdinIsTTY: true, stdoutIsTTY: true})).toBe(false)
    expect(canPrompt({json: false, interactiveDisabled: false, stdinIsTTY: false, stdoutIsTTY: true})).toBe(false)
  })
})
