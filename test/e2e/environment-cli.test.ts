import {execFileSync} from 'node:child_process'
import {chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {typedInto} from '../helpers/agent-shell.js'
import {cliEnv, runCli} from '../helpers/cli.js'
import {makeRepos, sh, type TestRepos} from '../helpers/git-repos.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'

/**
 * CONTRACT.md "Environments", the "Done when" with a shell agent: a small Node project
 * whose committed `.svc/setup` runs `npm ci` (offline: its one dependency is local) and whose
 * `.svc/settings.yaml` lists the ignored `.env` in `workspace.copy`. A new agent's first
 * `npm test` passes in its sandbox; `svc agent restart --setup` runs the setup again; a setup
 * that fails (the Hub's Layer-1 `workspace.setup`) makes `svc agent create` exit 1 `agent_failed`
 * with the exit code and the output's last lines in the agent's `error`.
 */
describe('svc agent create on a project with copied files and a setup', {timeout: 240_000}, () => {
  let hub: LiveHub
  let repos: TestRepos
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-env-'))
  let env: NodeJS.ProcessEnv
  const svc = (...args: string[]) => runCli(args, {env, timeoutMs: 120_000})

  beforeAll(async () => {
    hub = await startLiveHub('sqlite')
    repos = makeRepos()
    const c = repos.checkout
    const put = (rel: string, text: string) => (mkdirSync(join(c, rel, '..'), {recursive: true}), writeFileSync(join(c, rel), text))
    put('.gitignore', '*.log\nnode_modules/\n.env\n')
    put('lib/package.json', JSON.stringify({name: 'greeting', version: '1.0.0', main: 'index.js'}))
    put('lib/index.js', 'module.exports = (who) => `hello ${who}`\n')
    put('package.json', JSON.stringify({name: 'app', version: '1.0.0', private: true, scripts: {test: 'node test.js'}, dependencies: {greeting: 'file:./lib'}}))
    put('test.js', "require('fs').readFileSync('.env', 'utf8').split('\\n').forEach((l) => { const [k, v] = l.split('='); if (k) process.env[k] = v })\nconst out = require('greeting')(process.env.WHO)\nif (out !== 'hello from-dotenv') { console.error('FAIL', out); process.exit(1) }\nconsole.log('TESTS-PASSED', out)\n")
    put('.svc/setup', '#!/bin/sh\nset -e\necho setup-run >> setup-runs.log\nnpm ci --offline --no-audit --no-fund\n')
    chmodSync(join(c, '.svc/setup'), 0o755)
    // The lock file npm ci needs (made offline: the dependency is a local directory).
    execFileSync('npm', ['install', '--package-lock-only', '--offline', '--no-audit', '--no-fund'], {cwd: c, stdio: 'ignore'})
    sh(c, 'add', '-A')
    sh(c, 'commit', '-q', '-m', 'node project')
    // Not committed: the secret-ish .env and the project's own settings (svc keeps it out of git).
    put('.env', 'WHO=from-dotenv\n')
    put('.svc/settings.yaml', 'schema_version: "1"\nworkspace:\n  copy: [".env"]\n')
    const project = (await hub.request('GET', '/api/v1/projects/default')).body.project
    await hub.store.projects.update(project.id, {localPath: c}, iso(new Date()))
    env = cliEnv(home, {SVC_HUB_ENDPOINT: hub.url, SVC_DEV_TOKEN: hub.devToken})
  }, 120_000)
  afterAll(async () => {
    await hub?.dispose()
    repos?.dispose()
    rmSync(home, {recursive: true, force: true})
  })

  it("a new shell agent's first npm test passes (setup ran npm ci, .env was copied); restart --setup runs the setup again", async () => {
    const r = await svc('agent', 'create', 'app', '--harness', 'shell', '--json')
    expect(r.code, r.stdout + r.stderr).toBe(0)
    const agent = r.json.agent
    expect(agent).toMatchObject({name: 'app', phase: 'running'})
    const wd = agent.workspace.path as string
    expect(readFileSync(join(wd, 'setup-runs.log'), 'utf8')).toBe('setup-run\n')
    // The setup's output is the start of the agent's log.
    expect(String((await hub.request('GET', `/api/v1/agents/${agent.id}/logs`)).body)).toContain('[svc] setup: ./.svc/setup')
    expect(await typedInto(hub, agent.id, 'npm test >npm-test.log 2>&1; echo NPMTEST=$?', 'NPMTEST', {timeoutMs: 60_000})).toBe('0')
    expect(readFileSync(join(wd, 'npm-test.log'), 'utf8')).toContain('TESTS-PASSED hello from-dotenv')

    const plain = await svc('agent', 'restart', 'app', '--json')
    expect(plain.code, plain.stderr).toBe(0)
    expect(readFileSync(join(wd, 'setup-runs.log'), 'utf8')).toBe('setup-run\n')
    const again = await svc('agent', 'restart', 'app', '--setup', '--json')
    expect(again.code, again.stderr).toBe(0)
    expect(again.json.agent.phase).toBe('running')
    expect(readFileSync(join(wd, 'setup-runs.log'), 'utf8')).toBe('setup-run\nsetup-run\n')
  })

  it('a failing setup (the Hub\'s workspace.setup) is exit 1 agent_failed; the agent is in phase error with the exit code and last lines', async () => {
    // A branch without the committed .svc/setup: the setting applies.
    sh(repos.checkout, 'checkout', '-q', '-b', 'no-setup')
    sh(repos.checkout, 'rm', '-q', '.svc/setup')
    sh(repos.checkout, 'commit', '-q', '-m', 'no setup')
    try {
      const saved = await hub.request('PUT', '/api/v1/admin/server-config', {body: {workspace: {setup: 'echo preparing; echo "cannot find the database" >&2; exit 7'}}})
      expect(saved.status, JSON.stringify(saved.body)).toBe(200)
      const r = await svc('agent', 'create', 'broken', '--harness', 'shell', '--json')
      expect(r.code, r.stdout + r.stderr).toBe(1)
      expect(r.json.error.code).toBe('agent_failed')
      const failed = r.json.error.details.agent
      expect(failed).toMatchObject({name: 'broken', phase: 'error'})
      expect(failed.error).toMatch(/^the setup \(workspace\.setup\) exited with code 7; its last lines:\npreparing\ncannot find the database$/)
      expect(sh(repos.checkout, 'branch', '--list', 'svc/broken')).toBe('')
    } finally {
      await hub.request('PUT', '/api/v1/admin/server-config', {body: {workspace: null}})
      sh(repos.checkout, 'checkout', '-q', 'main')
    }
  })
})
