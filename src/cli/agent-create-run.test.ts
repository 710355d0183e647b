import {afterEach, describe, expect, it, vi} from 'vitest'
import {AppError} from '../api/app-error.js'
import type {HubClient} from '../client/hub-client.js'
import {createAgent} from './agent-create-run.js'
import {CommandContext} from './command-context.js'

// A context whose settings files cannot be read (as a malformed file answers), and a client
// that notes the Hub it was asked for and the body it sent.
function context() {
  const seen: {hub?: string; body?: Record<string, unknown>; settingsRead: number} = {settingsRead: 0}
  const ctx = {
    // The real rule of which Hub a command names itself.
    namedHub: CommandContext.prototype.namedHub,
    settings: async () => {
      seen.settingsRead++
      throw new AppError('config_invalid', 'settings.yaml:3: cannot be parsed')
    },
    client: async (hub?: string) => {
      seen.hub = hub
      return {call: async (_m: string, _p: string, body: Record<string, unknown>) => ((seen.body = body), {agent: {id: 'a1', name: body.name, phase: 'running'}})} as unknown as HubClient
    },
  } as unknown as CommandContext
  return {ctx, seen}
}

describe('createAgent and the settings files', () => {
  afterEach(() => vi.unstubAllEnvs())

  it('reads no settings file when the command names the project and the Hub (SVC_HUB_ENDPOINT or --hub)', async () => {
    vi.stubEnv('SVC_HUB_ENDPOINT', 'http://127.0.0.1:9')
    const {ctx, seen} = context()
    await createAgent(ctx, {name: 'x', task: 't'}, {project: 'p1'})
    expect(seen).toMatchObject({hub: 'http://127.0.0.1:9', settingsRead: 0, body: {name: 'x', projectId: 'p1', task: 't'}})
    const other = context()
    await createAgent(other.ctx, {name: 'y'}, {project: 'p1', hub: 'http://hub.example'})
    expect(other.seen).toMatchObject({hub: 'http://hub.example', settingsRead: 0})
  })

  it('reads them (and refuses a broken one) when the project comes from them', async () => {
    vi.stubEnv('SVC_HUB_ENDPOINT', 'http://127.0.0.1:9')
    const {ctx, seen} = context()
    await expect(createAgent(ctx, {name: 'x'}, {})).rejects.toMatchObject({code: 'config_invalid'})
    expect(seen.settingsRead).toBe(1)
  })

  it('leaves the Hub to the settings when neither --hub nor SVC_HUB_ENDPOINT names it', async () => {
    vi.stubEnv('SVC_HUB_ENDPOINT', '')
    const {ctx, seen} = context()
    await createAgent(ctx, {name: 'x'}, {project: 'p1'})
    expect(seen.hub).toBeUndefined()
  })
})
