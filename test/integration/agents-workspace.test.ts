import {execFileSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {describeEachDialect} from '../helpers/hub.js'
import {agentProcessEnv, startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'

/** A real git checkout with one commit on `main`. */
function makeCheckout(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'svc-checkout-')))
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], {stdio: 'pipe'})
  git('init', '-q', '-b', 'main')
  git('config', 'user.email', 'dev@example.com')
  git('config', 'user.name', 'Dev')
  writeFileSync(join(dir, 'README.md'), '# demo\n')
  git('add', '.')
  git('commit', '-qm', 'first')
  return dir
}

const gitOut = (dir: string, ...args: string[]) => execFileSync('git', ['-C', dir, ...args], {stdio: 'pipe'}).toString().trim()
const branches = (dir: string) => gitOut(dir, 'branch', '--format=%(refname:short)').split('\n').filter(Boolean).sort()
const worktrees = (dir: string) => gitOut(dir, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length

// Harness configs with needs: a secret entry, an auth type's key (Claude Code's API key, satisfied
// by env), and an executable nobody has.
const SETTINGS = `schema_version: "1"
harness_configs:
  needy:
    harness: shell
    secrets:
      - key: DEPLOY_TOKEN
        description: token for the deploy script
  keyed:
    harness: claude
    env:
      ANTHROPIC_API_KEY: sk-ant-from-env-0000000000000000000000
      PATH: /nonexistent
  unkeyed:
    harness: claude
    env:
      PATH: /nonexistent
  missing:
    harness: no-such-harness-cli
  gemini:
    env:
      GEMINI_API_KEY: from-settings-0000
      PATH: /nonexistent
`

describeEachDialect('agents: a git worktree per agent on the co-located broker', (dialect) => {
  let hub: LiveHub
  let checkout: string
  let projectId: string

  beforeAll(async () => {
    hub = await startLiveHub(dialect, {files: {'.svc/settings.yaml': SETTINGS}})
    checkout = makeCheckout()
    const r = await hub.request('POST', '/api/v1/projects/register', {body: {name: 'demo', localPath: checkout}})
    expect(r.status).toBe(201)
    expect(r.body.project.localPath).toBe(checkout)
    projectId = r.body.project.id
  })
  afterAll(async () => {
    await hub?.dispose()
    if (checkout) rmSync(checkout, {recursive: true, force: true})
  })

  const create = (name: string, extra: Record<string, unknown> = {}) => hub.request('POST', '/api/v1/agents', {body: {name, projectId, harnessConfig: 'shell', ...extra}})
  /** The harness process's environment once it has `key`. */
  const envWith = (id: string, key: string, what: string) =>
    waitFor(() => {
      const env = agentProcessEnv(hub.tmuxTmpdir, id)
      return env[key] ? env : null
    }, 10_000, what)
  const sessionExists = (id: string) => hub.tmux('has-session', '-t', `=svc-${id}`).code === 0

  it('register refuses a localPath that is not a git checkout, and links the same checkout again without a second project', async () => {
    const plain = mkdtempSync(join(tmpdir(), 'svc-plain-'))
    const bad = await hub.request('POST', '/api/v1/projects/register', {body: {name: 'plain', localPath: plain}})
    expect(bad.status).toBe(422)
    expect(bad.body.error.code).toBe('checkout_invalid')
    const again = await hub.request('POST', '/api/v1/projects/register', {body: {name: 'demo-again', localPath: join(checkout, '.')}})
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({created: false, project: {id: projectId}})
    rmSync(plain, {recursive: true, force: true})
  })

  it('each agent gets its own repository on svc/<name> from the checkout HEAD, recorded on the agent', async () => {
    const head = gitOut(checkout, 'rev-parse', 'HEAD')
    const a = await create('alpha')
    const b = await create('beta')
    expect(a.status).toBe(201)
    expect(b.status).toBe(201)
    const wa = a.body.agent.workspace
    const wb = b.body.agent.workspace
    expect(wa).toMatchObject({branch: 'svc/alpha', baseRef: 'main', baseCommit: head})
    expect(wb).toMatchObject({branch: 'svc/beta', baseRef: 'main', baseCommit: head})
    expect(wa.path).not.toBe(wb.path)
    expect(gitOut(wa.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('svc/alpha')
    expect(readFileSync(join(wa.path, 'README.md'), 'utf8')).toBe('# demo\n')
    // Its own repository: the branch is there, not in the checkout (it gets there by a merge or a delete).
    expect(branches(wa.path)).toEqual(['svc/alpha'])
    expect(branches(checkout)).toEqual(['main'])
    expect(worktrees(checkout)).toBe(1)
    // The harness runs in its worktree with its own HOME, and reads a fresh token from a file.
    const env = await envWith(a.body.agent.id, 'SVC_AGENT_ID', 'agent env')
    expect(env.HOME).not.toBe(process.env.HOME)
    expect(readFileSync(env.SVC_AUTH_TOKEN_FILE, 'utf8').trim()).toBe(env.SVC_AUTH_TOKEN)
    hub.tmux('send-keys', '-t', `=svc-${a.body.agent.id}:`, '-l', 'pwd > where.txt')
    hub.tmux('send-keys', '-t', `=svc-${a.body.agent.id}:`, 'Enter')
    // The shell creates the file before pwd writes into it: wait for the whole line.
    const where = await waitFor(() => (existsSync(join(wa.path, 'where.txt')) ? /\n$/.exec(readFileSync(join(wa.path, 'where.txt'), 'utf8'))?.input : undefined), 10_000, 'the shell to write in its worktree')
    expect(where.trim()).toBe(wa.path)
    const got = await hub.request('GET', `/api/v1/agents/${a.body.agent.id}`)
    expect(got.body.agent.workspace).toEqual(wa)
  })

  it('deleting an agent removes its work tree and keeps its branch in the checkout, with its commits', async () => {
    const a = await create('gamma')
    const ws = a.body.agent.workspace
    writeFileSync(join(ws.path, 'committed.txt'), 'committed work of the agent\n')
    gitOut(ws.path, 'add', 'committed.txt')
    gitOut(ws.path, '-c', 'user.name=gamma', '-c', 'user.email=g@example.com', 'commit', '-qm', 'gamma work')
    const tip = gitOut(ws.path, 'rev-parse', 'HEAD')
    writeFileSync(join(ws.path, 'scratch.txt'), 'uncommitted work of the agent\n')
    const del = await hub.request('DELETE', `/api/v1/agents/${a.body.agent.id}`)
    expect(del.status).toBe(200)
    expect(existsSync(ws.path)).toBe(false)
    expect(branches(checkout)).toContain('svc/gamma')
    expect(gitOut(checkout, 'rev-parse', 'svc/gamma')).toBe(tip)
    expect(gitOut(checkout, 'worktree', 'list')).not.toContain(ws.path)
  })

  describe('refusals change nothing: no agent, branch, worktree or tmux session', () => {
    const snapshot = async () => ({
      branches: branches(checkout),
      worktrees: worktrees(checkout),
      agents: (await hub.request('GET', `/api/v1/agents?projectId=${projectId}`)).body.agents.map((x: {name: string}) => x.name).sort(),
      sessions: hub.tmux('list-sessions', '-F', '#{session_name}').stdout.split('\n').filter(Boolean).sort(),
    })

    it('a dirty checkout is checkout_dirty naming the file; the same name works once it is clean', async () => {
      const before = await snapshot()
      writeFileSync(join(checkout, 'README.md'), '# changed\n')
      const r = await create('delta')
      expect(r.status).toBe(409)
      expect(r.body.error).toMatchObject({code: 'checkout_dirty', details: {files: ['README.md']}})
      expect(await snapshot()).toEqual(before)
      gitOut(checkout, 'checkout', '--', 'README.md')
      // Untracked files (the .svc/ that register writes, say) do not make it dirty.
      writeFileSync(join(checkout, 'notes.txt'), 'untracked\n')
      const ok = await create('delta')
      expect(ok.status).toBe(201)
      expect(ok.body.agent.workspace.branch).toBe('svc/delta')
      rmSync(join(checkout, 'notes.txt'))
    })

    it('a detached checkout is checkout_detached', async () => {
      const before = await snapshot()
      gitOut(checkout, 'checkout', '-q', '--detach')
      const r = await create('epsilon')
      gitOut(checkout, 'checkout', '-q', 'main')
      expect(r.status).toBe(409)
      expect(r.body.error.code).toBe('checkout_detached')
      expect(await snapshot()).toEqual(before)
    })

    it('an existing branch svc/<name> is branch_exists and is left as it was', async () => {
      gitOut(checkout, 'branch', 'svc/zeta')
      const before = await snapshot()
      const r = await create('zeta')
      expect(r.status).toBe(409)
      expect(r.body.error).toMatchObject({code: 'branch_exists', details: {branch: 'svc/zeta'}})
      expect(await snapshot()).toEqual(before)
    })

    it('a harness whose executable is missing is harness_not_installed, naming it', async () => {
      const before = await snapshot()
      const r = await create('eta', {harnessConfig: 'missing'})
      expect(r.status).toBe(422)
      expect(r.body.error.code).toBe('harness_not_installed')
      expect(r.body.error.message).toContain('no-such-harness-cli')
      expect(await snapshot()).toEqual(before)
    })

    it('a required secret nobody set is missing_secrets listing it; set as a project secret, it reaches the harness environment only', async () => {
      const before = await snapshot()
      const r = await create('theta', {harnessConfig: 'needy'})
      expect(r.status).toBe(422)
      expect(r.body.error).toMatchObject({code: 'missing_secrets', details: {missing: [{key: 'DEPLOY_TOKEN', description: 'token for the deploy script'}]}})
      expect(await snapshot()).toEqual(before)
      expect((await hub.request('PUT', `/api/v1/projects/${projectId}/secrets/DEPLOY_TOKEN`, {body: {value: 's3cr3t-deploy'}})).status).toBe(200)
      const ok = await create('theta', {harnessConfig: 'needy'})
      expect(ok.status).toBe(201)
      const id = ok.body.agent.id
      expect(sessionExists(id)).toBe(true)
      const env = await envWith(id, 'DEPLOY_TOKEN', 'the secret in the harness env')
      expect(env.DEPLOY_TOKEN).toBe('s3cr3t-deploy')
      // Not on tmux's command line or in its environment, not in the worktree.
      expect(hub.tmux('show-environment', '-t', `svc-${id}`).stdout).not.toContain('s3cr3t-deploy')
      const files = gitOut(ok.body.agent.workspace.path, 'ls-files', '--cached', '--others').split('\n').filter(Boolean)
      for (const f of files) expect(readFileSync(join(ok.body.agent.workspace.path, f), 'utf8')).not.toContain('s3cr3t-deploy')
    })

    it('starting a stopped agent whose secret was deleted meanwhile is missing_secrets and leaves it stopped', async () => {
      const agent = (await hub.request('GET', `/api/v1/projects/${projectId}/agents/theta`)).body.agent
      expect((await hub.request('POST', `/api/v1/agents/${agent.id}/stop`, {body: {}})).body.agent.phase).toBe('stopped')
      expect((await hub.request('DELETE', `/api/v1/projects/${projectId}/secrets/DEPLOY_TOKEN`)).status).toBeLessThan(300)
      const r = await hub.request('POST', `/api/v1/agents/${agent.id}/start`, {body: {}})
      expect(r.status).toBe(422)
      expect(r.body.error).toMatchObject({code: 'missing_secrets', details: {missing: [{key: 'DEPLOY_TOKEN'}]}})
      expect((await hub.request('GET', `/api/v1/agents/${agent.id}`)).body.agent).toMatchObject({phase: 'stopped', error: null})
      expect(sessionExists(agent.id)).toBe(false)
    })

    it("Claude Code's API key is a need; given in the harness config's env, no secret is required", async () => {
      const before = await snapshot()
      const missing = await create('iota', {harnessConfig: 'unkeyed'})
      expect(missing.status).toBe(422)
      expect(missing.body.error).toMatchObject({code: 'missing_secrets', details: {missing: [{key: 'ANTHROPIC_API_KEY'}]}})
      // With the key in env the create gets as far as the executable (kept off PATH here).
      const r = await create('iota', {harnessConfig: 'keyed'})
      expect(r.status).toBe(422)
      expect(r.body.error.code).toBe('harness_not_installed')
      expect(r.body.error.message).toMatch(/Claude Code.*npm install -g @anthropic-ai\/claude-code/)
      expect(await snapshot()).toEqual(before)
    })

    it('settings for a built-in config name (gemini, no `harness`) change that config: its env applies and it stays Gemini CLI', async () => {
      const before = await snapshot()
      // Its key comes from the settings' env (no missing_secrets); its PATH hides the executable.
      const r = await create('kappa', {harnessConfig: 'gemini'})
      expect(r.status).toBe(422)
      expect(r.body.error.code).toBe('harness_not_installed')
      expect(r.body.error.message).toMatch(/Gemini CLI \(`gemini`\).*npm install -g @google\/gemini-cli/)
      expect(await snapshot()).toEqual(before)
    })
  })

  it('max_turns: the turn that reaches it stops the agent with activity limits_exceeded', async () => {
    const r = await create('kappa', {maxTurns: 2})
    const id = r.body.agent.id
    const env = await envWith(id, 'SVC_AUTH_TOKEN', 'agent env')
    const report = (body: object) => hub.request('POST', `/api/v1/agents/${id}/status`, {token: env.SVC_AUTH_TOKEN, body})
    expect((await report({activity: 'idle', turnEnded: true})).status).toBe(200)
    expect((await hub.request('GET', `/api/v1/agents/${id}`)).body.agent).toMatchObject({phase: 'running', turns: 1})
    expect((await report({activity: 'idle', turnEnded: true})).status).toBe(200)
    const stopped = await waitFor(async () => {
      const a = (await hub.request('GET', `/api/v1/agents/${id}`)).body.agent
      return a.phase === 'stopped' && a
    }, 10_000, 'the agent to stop at max_turns')
    expect(stopped).toMatchObject({activity: 'limits_exceeded', turns: 2})
    expect(stopped.detail).toContain('max_turns')
    expect(sessionExists(id)).toBe(false)
  })

  it('max_duration: the broker stops the agent when it runs out', async () => {
    const r = await create('lambda', {maxDuration: '2s'})
    const id = r.body.agent.id
    expect(r.body.agent.phase).toBe('running')
    const stopped = await waitFor(async () => {
      const a = (await hub.request('GET', `/api/v1/agents/${id}`)).body.agent
      return a.phase === 'stopped' && a
    }, 20_000, 'the agent to stop at max_duration')
    expect(stopped).toMatchObject({activity: 'limits_exceeded'})
    expect(stopped.detail).toContain('max_duration')
    expect(sessionExists(id)).toBe(false)
  })
})
