import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {DEFAULT_RESOURCES, type RuntimeHandle} from '../runtime.js'
import {LocalTmuxRuntime} from '../runtimes/local-tmux.js'
import {runCommand} from '../runtimes/run-command.js'
import {readRecord, repoMounts, agentRepoPaths} from '../workspace/agent-repo.js'
import {createWorkspace} from '../workspace/repository.js'

// Real tmux (a private server under this file's TMUX_TMPDIR), real bwrap, real git. The "Hub
// user" has its own HOME here with a dev token in ~/.svc, and the broker's environment carries
// a variable of the Hub: the agent, a plain shell driven by keys, must see none of them.
let dir: string
let env: NodeJS.ProcessEnv
let rt: LocalTmuxRuntime
let handle: RuntimeHandle
const HUB_SECRET = 'hub-secret-value-7f3a'
const TOKEN = 'svc_dev_' + 'ab'.repeat(32)
let wt: (id: string) => string
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, {cwd, encoding: 'utf8'}).trim()

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-sandbox-'))
  mkdirSync(join(dir, 'hubhome', '.svc'), {recursive: true})
  writeFileSync(join(dir, 'hubhome', '.svc', 'dev-token'), TOKEN, {mode: 0o600})
  mkdirSync(join(dir, 'tmux'))
  env = {...process.env, HOME: join(dir, 'hubhome'), TMUX_TMPDIR: join(dir, 'tmux'), HUB_ONLY_VARIABLE: HUB_SECRET}
  delete env.TMUX
  // A checkout with two agent worktrees, as the broker makes them.
  const repo = join(dir, 'repo')
  mkdirSync(repo)
  git(repo, 'init', '-q', '-b', 'main')
  writeFileSync(join(repo, 'README'), 'hello\n')
  git(repo, 'add', 'README')
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first')
  // Two agents' own repositories, as the broker makes them, under the runtime's state directory.
  const a1 = agentRepoPaths(join(dir, 'state'), 'a1')
  const a2 = agentRepoPaths(join(dir, 'state'), 'a2')
  await createWorkspace({checkout: repo, branch: 'svc/a1'}, a1)
  await createWorkspace({checkout: repo, branch: 'svc/a2'}, a2)
  wt = (id: string) => join(dir, 'state', 'workspaces', id)
  writeFileSync(join(wt('a2'), 'other-agent.txt'), 'not yours\n')
  const mounts = repoMounts(a1, readRecord(a1)!)
  rt = new LocalTmuxRuntime({stateDir: join(dir, 'state'), env, sandbox: 'bubblewrap', pollMs: 50, nice: 3})
  handle = await rt.start({
    agentId: 'sandboxed-a1',
    name: 'a1',
    projectId: 'p1',
    command: ['/bin/bash', '--noprofile', '--norc', '-i'],
    env: {SVC_AGENT_ID: 'sandboxed-a1', SVC_AUTH_TOKEN: 'svc_agt_x', PS1: '$ '},
    workdir: wt('a1'),
    home: join(dir, 'state', 'homes', 'a1'),
    writablePaths: mounts.writable,
    readablePaths: mounts.readable,
    resources: DEFAULT_RESOURCES,
  })
  for (let i = 0; i < 100 && !(await rt.terminalReady(handle)); i++) await new Promise((r) => setTimeout(r, 100))
}, 60_000)

afterAll(async () => {
  await runCommand('tmux', ['-L', 'svc', 'kill-server'], {env})
  await rm(dir, {recursive: true, force: true})
})

async function log(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of rt.logs(handle, {follow: false})) chunks.push(c)
  return Buffer.concat(chunks).toString('utf8')
}

/** Types a command line into the agent's shell and returns the number printed after `<marker>=`. */
async function typed(line: string, marker: string): Promise<string> {
  // Split the marker with "" inside the echoed string, so the typed line itself never matches.
  await rt.sendKeys(handle, {literal: line.replace(`${marker}=`, `${marker[0]}""${marker.slice(1)}=`)})
  await rt.sendKeys(handle, {key: 'Enter'})
  const re = new RegExp(`${marker}=([^\\s$]+)`)
  await expect.poll(async () => re.exec(await log())?.[1], {timeout: 20_000}).toBeTruthy()
  return re.exec(await log())![1]
}

describe('the local runtime runs an agent in a bubblewrap sandbox', () => {
  it('records the sandbox on the handle', () => {
    expect(handle).toEqual({runtime: 'local', ref: 'svc-sandboxed-a1', sandbox: 'bubblewrap'})
  })

  it('the Hub user\'s ~/.svc/dev-token cannot be read, nor anything of that HOME', async () => {
    expect(await typed(`cat ${join(dir, 'hubhome', '.svc', 'dev-token')}; echo "devtoken-rc=$?"`, 'devtoken-rc')).not.toBe('0')
    expect(await typed(`ls ${join(dir, 'hubhome')}; echo "hubhome-rc=$?"`, 'hubhome-rc')).not.toBe('0')
    expect(await log()).not.toContain(TOKEN)
  })

  it('another agent\'s worktree is not there', async () => {
    expect(await typed(`cat ${join(wt('a2'), 'other-agent.txt')}; echo "other-rc=$?"`, 'other-rc')).not.toBe('0')
    expect(await log()).not.toContain('not yours')
  })

  it('no variable of the Hub\'s environment, in its own environment or any process it can see; HOME is its own', async () => {
    expect(await typed('echo "hubvar=[$HUB_ONLY_VARIABLE]"', 'hubvar')).toBe('[]')
    expect(await typed(`echo "procs=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c HUB_ONLY_VARIABLE)"`, 'procs')).toBe('0')
    expect(await typed('echo "agent=$SVC_AGENT_ID"', 'agent')).toBe('sandboxed-a1')
    expect(await typed('echo "home=$HOME"', 'home')).toBe(join(dir, 'state', 'homes', 'a1'))
    expect(await typed(`echo "tmuxenv=[\${TMUX:-none}]"`, 'tmuxenv')).toBe('[none]')
    // The tmux server (which could type into any agent) is out of reach.
    expect(await typed(`ls ${join(dir, 'tmux')}; echo "tmuxdir-rc=$?"`, 'tmuxdir-rc')).not.toBe('0')
    expect(await log()).not.toContain(HUB_SECRET)
  })

  it('its own repository is writable and `git commit` works on its branch; the checkout\'s .git is read-only', async () => {
    expect(await typed('echo made-inside > inside.txt && git add inside.txt && git -c user.name=agent -c user.email=a@example.com commit -qm from-the-sandbox; echo "commit-rc=$?"', 'commit-rc')).toBe('0')
    expect(git(wt('a1'), 'log', '-1', '--format=%s', 'svc/a1')).toBe('from-the-sandbox')
    // The commit is the agent's alone: the checkout has no such branch, its main did not move.
    expect(() => git(join(dir, 'repo'), 'rev-parse', '--verify', '-q', 'refs/heads/svc/a1')).toThrow()
    expect(await typed(`touch ${join(dir, 'repo', '.git', 'hooks', 'post-commit')}; echo "hook-rc=$?"`, 'hook-rc')).not.toBe('0')
    expect(await typed(`echo x > ${join(dir, 'repo', '.git', 'objects', 'planted')}; echo "obj-rc=$?"`, 'obj-rc')).not.toBe('0')
    expect(await typed('touch /usr/planted; echo "usr-rc=$?"', 'usr-rc')).not.toBe('0')
  })

  it('runs at the runtime\'s `nice` inside the sandbox too', async () => {
    const autogroups = readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1'
    expect(await typed('echo "prio=$(sed "s/.* nice //" /proc/self/autogroup):$(nice)"', 'prio')).toBe(autogroups ? '3:0' : '0:3')
  })

  it('agents started together all get the nice value (the kernel lets an unprivileged process set it once per 100 ms)', async () => {
    if (readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() !== '1') return
    const ids = ['burst-1', 'burst-2', 'burst-3', 'burst-4']
    const out = (id: string) => join(wt('a2'), `${id}.prio`)
    // Each writes its session's autogroup nice into the worktree it may write, then exits.
    await Promise.all(ids.map((id) => rt.start({agentId: id, name: id, projectId: 'p1', command: ['/bin/sh', '-c', `sed "s/.* nice //" /proc/self/autogroup > ${out(id)}`], env: {SVC_AGENT_ID: id}, workdir: wt('a2'), home: join(dir, 'state', 'homes', id), resources: DEFAULT_RESOURCES})))
    await expect.poll(() => ids.map((id) => (existsSync(out(id)) ? readFileSync(out(id), 'utf8').trim() : '')), {timeout: 20_000}).toEqual(['3', '3', '3', '3'])
  })

  it('svc is on its PATH (hooks and `svc status` run inside)', async () => {
    expect(await typed('svc --version >/dev/null; echo "svc-rc=$?"', 'svc-rc')).toBe('0')
  }, 60_000)

  it('without a working bwrap the runtime refuses to start an agent, naming the package and the setting', async () => {
    const broken = new LocalTmuxRuntime({stateDir: join(dir, 'state2'), env, sandbox: 'bubblewrap', bwrap: join(dir, 'no-such-bwrap')})
    await expect(broken.start({agentId: 'nobwrap', name: 'n', projectId: 'p1', command: ['/bin/true'], env: {}, resources: DEFAULT_RESOURCES})).rejects.toThrow(
      /bubblewrap sandbox, and bwrap cannot run here .*apt-get install bubblewrap.*runtimes\.<name>\.sandbox/,
    )
    expect((await runCommand('tmux', ['-L', 'svc', 'has-session', '-t', '=svc-nobwrap'], {env})).code).not.toBe(0)
  })
})
