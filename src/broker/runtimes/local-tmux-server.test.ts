import {spawn} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it, vi} from 'vitest'
import {DEFAULT_RESOURCES, type AgentSpec} from '../runtime.js'
import {LocalTmuxRuntime} from './local-tmux.js'
import {runCommand} from './run-command.js'
import {keepServerArgs} from './tmux-args.js'
import {usePrivateTmux} from '../../../test/helpers/private-tmux.js'

// svc's tmux server between agents (keepServerArgs) and the early session check (prepareStart),
// on real tmux under this file's own TMUX_TMPDIR.
let dir: string
let env: NodeJS.ProcessEnv
let rt: LocalTmuxRuntime
let n = 0

usePrivateTmux('svc-tmux-kept-', {socketName: 'svc-early'}, (t) => void ({dir, env, rt} = t))

function spec(over: Partial<AgentSpec> = {}): AgentSpec {
  n += 1
  const agentId = `kept-${n}-${process.pid}`
  return {agentId, name: `k${n}`, projectId: 'p1', command: ['sleep', '60'], env: {SVC_AGENT_ID: agentId}, resources: DEFAULT_RESOURCES, ...over}
}

async function waitFor(what: string, fn: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe("svc's tmux server between agents", () => {
  it("svc's tmux server outlives its last session while the broker's process runs, and ends after it", async () => {
    const own = new LocalTmuxRuntime({stateDir: join(dir, 'state'), env, socketName: 'svc-kept'})
    const serverUp = async () => (await runCommand('tmux', ['-L', 'svc-kept', 'ls'], {env})).code === 0
    const watched = spawn('sleep', ['600'], {stdio: 'ignore'})
    try {
      const h = await own.start(spec({command: ['sleep', '60']}))
      // Kept for the next agent (exit-empty off), started without a session: its argv, shown by
      // `ps` for its whole life, is not the first agent's command.
      expect((await runCommand('tmux', ['-L', 'svc-kept', 'show-options', '-s', 'exit-empty'], {env})).stdout.toString()).toContain('off')
      const serverPid = (await runCommand('tmux', ['-L', 'svc-kept', 'display-message', '-p', '#{pid}'], {env})).stdout.toString().trim()
      const argv = readFileSync(`/proc/${serverPid}/cmdline`, 'utf8')
      expect(argv).toContain('start-server')
      expect(argv).not.toContain('sleep')
      await own.stop(h)
      expect(await serverUp()).toBe(true)
      const next = await own.start(spec({command: ['sleep', '60']}))
      expect(await own.isRunning(next)).toBe(true)
      await own.stop(next)
      // The same keeping, tied to another process: the empty server ends once that process is gone.
      expect((await runCommand('tmux', ['-L', 'svc-kept', ...keepServerArgs('tmux', watched.pid!)], {env})).code).toBe(0)
      await runCommand('tmux', ['-L', 'svc-kept', 'set-option', '-s', 'exit-empty', 'off'], {env})
      watched.kill()
      await waitFor('the empty server to exit', async () => !(await serverUp()), 15_000)
    } finally {
      watched.kill()
      await runCommand('tmux', ['-L', 'svc-kept', 'kill-server'], {env})
    }
  })

  it('prepareStart asks early whether the session exists, and start() takes that answer', async () => {
    const s = spec({command: ['sleep', '60']})
    rt.prepareStart(s.agentId)
    const h = await rt.start(s)
    rt.prepareStart(s.agentId)
    await expect(rt.start(s)).rejects.toThrow(/already has a tmux session/)
    expect(await rt.isRunning(h)).toBe(true)
    await rt.stop(h)
    expect(() => rt.prepareStart('x; kill-server')).not.toThrow()
  })

  it('an answer start() never took (a start that failed before it) is dropped once too old to serve', async () => {
    const asked = Reflect.get(rt, 'asked') as Map<string, unknown>
    const failed = spec()
    rt.prepareStart(failed.agentId)
    expect(asked.size).toBe(1)
    const later = Date.now() + 61_000
    const now = vi.spyOn(Date, 'now').mockReturnValue(later)
    try {
      const next = spec()
      rt.prepareStart(next.agentId)
      // Only the new answer is kept; start() takes it.
      expect(asked.size).toBe(1)
      now.mockRestore()
      const h = await rt.start(next)
      expect(asked.size).toBe(0)
      await rt.stop(h)
    } finally {
      now.mockRestore()
    }
  })
})
