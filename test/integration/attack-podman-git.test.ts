import {execFileSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {buildBaseImage} from '../../src/broker/images/build-base.js'
import {runCommand} from '../../src/broker/runtimes/run-command.js'
import {findExecutable} from '../../src/broker/sandbox/host.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {typedInto} from '../helpers/agent-shell.js'

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, {cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']}).trim()
const podman = findExecutable('podman', `${process.env.PATH}:/usr/sbin:/sbin`)
if (!podman && process.env.CI !== 'true') console.warn('attack-podman-git.test.ts: SKIPPED: podman is not installed here (Debian: apt-get install podman runc debootstrap)')

/**
 * The git attacks of the isolation issue from inside a real podman container (the base image):
 * the agent's git config never runs on the host when svc diffs and merges (control: a trusting
 * host git runs it), the checkout's refs and objects cannot be written from inside, and the
 * agent's normal work (commit, diff, merge) works there. podman-live.test.ts requires podman in CI.
 */
describe.skipIf(!podman)('attacks on the host through git, from inside a podman container', () => {
  let hub: LiveHub
  let checkout: string
  let agent: any

  beforeAll(async () => {
    await buildBaseImage({engine: 'podman', progress: (l) => console.error(`[attack-podman] ${l}`)})
    hub = await startLiveHub('sqlite', {env: {SVC_SERVER_BROKER_RUNTIME: 'podman', CONTAINER_HOST: undefined, DOCKER_HOST: undefined} as unknown as Record<string, string>})
    checkout = mkdtempSync(join(tmpdir(), 'svc-attack-podman-'))
    git(checkout, 'init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# target\n')
    git(checkout, 'add', '.')
    git(checkout, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first')
    const projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'attack-podman', localPath: checkout}})).body.project.id
    agent = (await hub.request('POST', '/api/v1/agents', {body: {name: 'boxed', projectId, harnessConfig: 'shell'}})).body.agent
    expect(agent, agent?.error).toMatchObject({phase: 'running', runtime: 'podman', sandbox: 'container'})
  }, 900_000)
  afterAll(async () => {
    if (agent) await runCommand('podman', ['rm', '-f', `svc-${agent.id}`]).catch(() => {})
    await hub?.dispose()
    if (checkout) rmSync(checkout, {recursive: true, force: true})
  })

  const logs = async () => String((await hub.request('GET', `/api/v1/agents/${agent.id}/logs`)).body)
  const typed = (line: string, marker: string) => typedInto(hub, agent.id, line, marker, {timeoutMs: 120_000, retryKeys: true})

  it('its git config runs nothing on the host; the checkout cannot be written; commit, diff and merge work', async () => {
    const ws = agent.workspace.path
    // The container's /tmp is its own: a marker in the host's /tmp is written only by the host.
    const marker = join(tmpdir(), `svc-pwned-podman-${randomBytes(6).toString('hex')}`)
    const plant = [
      `printf '#!/bin/sh\\necho pwned >> ${marker}\\ncat\\n' > evil.sh && chmod +x evil.sh`,
      'git config core.fsmonitor "$PWD/evil.sh" && git config diff.external "$PWD/evil.sh" && git config core.pager "$PWD/evil.sh"',
      'echo "planted-rc=$?"',
    ].join(' && ')
    expect(await typed(plant, 'planted-rc')).toBe('0')
    git(ws, 'status', '--porcelain')
    expect(existsSync(marker), 'control: a host git trusting the agent repository runs its program').toBe(true)
    rmSync(marker)

    const before = git(checkout, 'for-each-ref')
    for (const [line, m] of [
      [`git -C ${checkout} update-ref refs/heads/main HEAD; echo "main-rc=$?"`, 'main-rc'],
      [`echo evil > ${join(checkout, '.git', 'hooks', 'post-merge')}; echo "hook-rc=$?"`, 'hook-rc'],
      [`touch ${join(checkout, '.git', 'objects', 'planted')}; echo "obj-rc=$?"`, 'obj-rc'],
    ]) expect(await typed(line, m), line).not.toBe('0')
    expect(git(checkout, 'for-each-ref')).toBe(before)

    expect(await typed('git config --unset core.fsmonitor && echo mine > mine.txt && git add mine.txt evil.sh && git -c user.name=b -c user.email=b@example.com commit -qm boxed; echo "commit-rc=$?"', 'commit-rc')).toBe('0')
    const diff = await hub.request('GET', `/api/v1/agents/${agent.id}/diff`)
    expect(diff.status, JSON.stringify(diff.body)).toBe(200)
    expect(diff.body.files.map((f: {path: string}) => f.path).sort()).toEqual(['evil.sh', 'mine.txt'])
    const merged = await hub.request('POST', `/api/v1/agents/${agent.id}/merge`, {body: {}})
    expect(merged.status, JSON.stringify(merged.body)).toBe(200)
    expect(readFileSync(join(checkout, 'mine.txt'), 'utf8')).toBe('mine\n')
    expect(existsSync(marker)).toBe(false)
  }, 600_000)
})
