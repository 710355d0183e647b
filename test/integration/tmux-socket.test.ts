import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startLiveHub, tmuxAt, waitFor, type LiveHub} from '../helpers/live-hub.js'

/**
 * Issue 30 item 8: agents' tmux sessions live on svc's own server (`tmux -L svc`, under
 * TMUX_TMPDIR), not on the user's default one: `tmux ls` shows none of them while they run.
 * A real Hub with its co-located broker on the local runtime.
 */
describe("agents' tmux sessions on svc's own socket", () => {
  let hub: LiveHub

  beforeAll(async () => {
    hub = await startLiveHub('sqlite')
  })
  afterAll(async () => {
    tmuxAt(hub.tmuxTmpdir, ['kill-server'], null)
    await hub?.dispose()
  })

  it('while an agent runs, `tmux ls` (default socket) lists no agent session; `tmux -L svc ls` lists it', async () => {
    const made = await hub.request('POST', '/api/v1/agents', {body: {name: 'hidden', projectId: 'default', harnessConfig: 'shell'}})
    expect(made.body.agent).toMatchObject({phase: 'running'})
    const id = made.body.agent.id
    const own = tmuxAt(hub.tmuxTmpdir, ['ls', '-F', '#{session_name}'])
    expect(own.stdout.split('\n')).toContain(`svc-${id}`)
    // The user's default server: none at all, then one of the user's own that lists only itself.
    const users = tmuxAt(hub.tmuxTmpdir, ['ls', '-F', '#{session_name}'], null)
    expect(users.stdout).not.toContain('svc-')
    expect(tmuxAt(hub.tmuxTmpdir, ['new-session', '-d', '-s', 'mine', 'sleep', '60'], null).code).toBe(0)
    expect(tmuxAt(hub.tmuxTmpdir, ['ls', '-F', '#{session_name}'], null).stdout.trim()).toBe('mine')
    // And the agent is driven all the same.
    expect((await hub.request('POST', `/api/v1/agents/${id}/keys`, {body: {keys: 'echo on-own-socket\r'}})).status).toBe(200)
    await waitFor(() => /^on-own-socket$/m.test(tmuxAt(hub.tmuxTmpdir, ['capture-pane', '-p', '-t', `=svc-${id}:`]).stdout), 10_000, 'the keys ran')
  })
})
