import {execFile} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {BIN, cliEnv, runCli} from '../helpers/cli.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'

/** Whole and short agent IDs out of human output, so it can be snapshot. */
const normalise = (text: string) => text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>').replace(/\b[0-9a-f]{8}(-[0-9a-f]{1,4})?(?= )/g, '<short>')

/**
 * Issue 30 item 5: `svc agent list` for many agents, as spawned processes against a real Hub
 * whose co-located broker runs `shell` agents: those that need you first, TASK, short IDs that
 * every agent command takes, a cost footer, `--wide`; `--json` keeps its shape.
 */
describe('svc agent list for many agents', {timeout: 180_000}, () => {
  let hub: LiveHub
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-list-'))
  let env: NodeJS.ProcessEnv
  const svc = (...args: string[]) => runCli(args, {env, timeoutMs: 60_000})
  const ids: Record<string, string> = {}

  beforeAll(async () => {
    hub = await startLiveHub('sqlite')
    env = cliEnv(home, {SVC_HUB_ENDPOINT: hub.url, SVC_DEV_TOKEN: hub.devToken})
    for (const [name, task] of [['first', 'write the README\nwith an example'], ['asker', 'ask before deleting anything'], ['failer', '']]) {
      const r = await svc('agent', 'create', name, '--harness', 'shell', ...(task ? ['--task', task] : []), '--json')
      expect(r.code, r.stdout + r.stderr).toBe(0)
      ids[name] = r.json.agent.id
    }
    // Reports as the agents' harnesses would make them; usage as a harness reports it.
    const now = iso(new Date())
    await hub.store.agents.update(ids.asker, {activity: 'waiting_for_input', detail: 'Permission: Bash', usage: {inputTokens: 10, outputTokens: 5, modelCalls: 1, costUsd: 0.25}}, now)
    await hub.store.agents.update(ids.first, {usage: {inputTokens: 10, outputTokens: 5, modelCalls: 1, costUsd: 1.5}}, now)
    await hub.store.agents.update(ids.failer, {phase: 'error', activity: null, error: 'harness crashed'}, now)
  }, 120_000)
  afterAll(async () => {
    await hub?.dispose()
    rmSync(home, {recursive: true, force: true})
  })

  it('human output: needs-you order, short IDs, the task\'s first line, a cost footer (snapshot)', async () => {
    const r = await svc('agent', 'list')
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines.slice(1, 4).map((l) => l.split(/\s+/)[0])).toEqual(['asker', 'failer', 'first'])
    for (const name of ['asker', 'failer', 'first']) expect(r.stdout).toContain(`  ${ids[name].slice(0, 8)}  `)
    expect(r.stdout).not.toContain(ids.first)
    expect(lines[3]).toMatch(/ write the README$/)
    expect(lines[4]).toBe('3 agents, total cost $1.75')
    expect(normalise(r.stdout)).toMatchSnapshot('agent list (human)')
    const wide = await svc('agent', 'list', '--wide')
    for (const name of ['asker', 'failer', 'first']) expect(wide.stdout).toContain(ids[name])
  })

  it('on a terminal a line is cut inside TASK to its width, ending in …; shorter lines stay whole', async () => {
    // script(1) gives svc a terminal of 100 columns.
    const cmd = `stty cols 100; ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} agent list`
    const r = await new Promise<string>((resolve, reject) =>
      execFile('script', ['-qc', cmd, '/dev/null'], {env, timeout: 60_000}, (err, stdout) => (err ? reject(err) : resolve(stdout))),
    )
    const lines = r.replace(/\r/g, '').trimEnd().split('\n')
    const asker = lines.find((l) => l.startsWith('asker'))!
    expect(asker).toHaveLength(100)
    expect(asker).toMatch(/ ask before del.*…$/)
    expect(lines.find((l) => l.startsWith('first'))).toMatch(/ write the README$/)
    expect(lines.every((l) => l.length <= 100)).toBe(true)
  })

  it('every agent command takes the short ID: get, keys, stop', async () => {
    const short = ids.first.slice(0, 8)
    const got = await svc('agent', 'get', short, '--json')
    expect(got.code, got.stderr).toBe(0)
    expect(got.json.agent.id).toBe(ids.first)
    expect((await svc('keys', short, 'echo hi')).code).toBe(0)
    const stopped = await svc('agent', 'stop', short, '--json')
    expect(stopped.code, stopped.stderr).toBe(0)
    expect(stopped.json.agent).toMatchObject({id: ids.first, phase: 'stopped'})
    const tooShort = await svc('agent', 'get', ids.first.slice(0, 7), '--json')
    expect(tooShort.code).toBe(1)
    expect(tooShort.json.error.code).toBe('not_found')
  })

  it('--json keeps its shape (the Hub\'s order and whole IDs), with mergedAt and pushedAt added', async () => {
    const r = await svc('agent', 'list', '--json')
    expect(r.code).toBe(0)
    expect(Object.keys(r.json)).toEqual(['agents'])
    expect(r.json.agents.map((a: {name: string}) => a.name)).toEqual(['first', 'asker', 'failer'])
    expect(r.json.agents[0]).toMatchObject({id: ids.first, task: 'write the README\nwith an example', mergedAt: null, pushedAt: null})
  })
})
