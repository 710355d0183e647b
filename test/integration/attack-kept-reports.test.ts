import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {typedInto} from '../helpers/agent-shell.js'

/**
 * The broker's courier of kept status reports reads `~/.svc/status-pending.json` and
 * `~/.svc/agent-token` in the agent's HOME, on the host, at every watch pass. From inside a real
 * `shell` agent (bubblewrap) the agent plants there a FIFO (a read of it never returns: the
 * broker, and the co-located Hub with it, would hang) and then a link to a host file holding a
 * report (the broker would read a file the agent cannot, and post it as the agent's). Each pass
 * must refuse both, change nothing on the host and leave the broker serving; the agent's own
 * kept report (a regular file) is still delivered (control).
 */
describe('attack on the kept-reports courier, from inside a sandboxed agent', () => {
  let hub: LiveHub
  let mallory: any
  const hostDir = mkdtempSync(join(tmpdir(), 'svc-attack-kept-'))
  const victim = join(hostDir, 'report.json')
  const pass = () => (hub.colocated!.broker as unknown as {deliverKeptReports(): Promise<void>}).deliverKeptReports()
  const typed = (line: string, marker: string) => typedInto(hub, mallory.id, line, marker)
  const detail = async () => (await hub.request('GET', `/api/v1/agents/${mallory.id}`)).body.agent.detail as string | null

  beforeAll(async () => {
    hub = await startLiveHub('sqlite')
    const checkout = join(hostDir, 'checkout')
    mkdirSync(checkout)
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {cwd: checkout})
    git('init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# demo\n')
    git('add', '.')
    git('commit', '-qm', 'first')
    const projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'kept', localPath: checkout}})).body.project.id
    mallory = (await hub.request('POST', '/api/v1/agents', {body: {name: 'mallory', projectId, harnessConfig: 'shell'}})).body.agent
    expect(mallory).toMatchObject({phase: 'running', sandbox: 'bubblewrap'})
    await waitFor(async () => (await hub.request('POST', `/api/v1/agents/${mallory.id}/keys`, {body: {keys: 'true\r'}})).status === 200, 20_000, 'the terminal')
    writeFileSync(victim, JSON.stringify({activity: 'idle', detail: 'read-from-the-host', turns: 0, usage: []}))
  }, 120_000)
  afterAll(async () => {
    await hub?.dispose()
    rmSync(hostDir, {recursive: true, force: true})
  })

  it('a FIFO and a link planted as the kept-reports file are refused; the broker keeps serving; a regular one is delivered', async () => {
    // The agent cannot see the host file it links to: the broker must not read it for it.
    expect(await typed(`cat ${victim} >/dev/null 2>&1; echo "see-rc=$?"`, 'see-rc')).not.toBe('0')
    expect(await typed('mkfifo "$HOME/.svc/status-pending.json"; echo "fifo-rc=$?"', 'fifo-rc')).toBe('0')
    await pass()
    expect((await hub.request('GET', `/api/v1/agents/${mallory.id}`)).status).toBe(200)

    expect(await typed(`rm -f "$HOME/.svc/status-pending.json"; ln -s ${victim} "$HOME/.svc/status-pending.json"; echo "link-rc=$?"`, 'link-rc')).toBe('0')
    await pass()
    expect(await detail()).not.toBe('read-from-the-host')
    expect(JSON.parse(readFileSync(victim, 'utf8'))).toMatchObject({detail: 'read-from-the-host'})

    // Control: the agent's own kept report, a regular file, is delivered by the same pass.
    const own = JSON.stringify({activity: 'idle', detail: 'kept-by-the-agent', turns: 0, usage: []})
    expect(await typed(`rm -f "$HOME/.svc/status-pending.json"; printf '%s' '${own}' > "$HOME/.svc/status-pending.json"; echo "own-rc=$?"`, 'own-rc')).toBe('0')
    await pass()
    await waitFor(async () => (await detail()) === 'kept-by-the-agent', 20_000, 'the kept report delivered')
  }, 120_000)
})
