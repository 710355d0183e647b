import {chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {execInAgent} from '../../src/broker/agent-exec.js'
import {launchAgent, LaunchError, type StartParams} from '../../src/broker/agent-launch.js'
import {LocalTmuxRuntime} from '../../src/broker/runtimes/local-tmux.js'
import {runCommand} from '../../src/broker/runtimes/run-command.js'
import {writeTemplateFiles} from '../../src/broker/template-files.js'
import {agentRepoPaths, readRecord} from '../../src/broker/workspace/agent-repo.js'
import {commitFile, makeRepos, sh, type TestRepos} from '../helpers/git-repos.js'
import {waitFor} from '../helpers/live-hub.js'

/**
 * The setup step and the copied files of a new agent (docs/environments.md) through the broker's
 * real start path: a real checkout with ignored files, real tmux, the agent in a real bubblewrap
 * sandbox. The setup runs inside that sandbox, before the harness, with the agent environment;
 * a failure, a hang past `workspace.setup_timeout` and an attack from the setup are each seen
 * as the broker answers the start.
 */
describe('workspace setup and copied files on the local runtime (bubblewrap)', {timeout: 120_000}, () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-env-setup-'))
  const stateDir = join(dir, 'state')
  const env: NodeJS.ProcessEnv = {...process.env, TMUX_TMPDIR: dir, HOME: join(dir, 'home'), SVC_HOME: join(dir, 'svc-home')}
  delete env.TMUX
  const runtime = new LocalTmuxRuntime({stateDir: join(stateDir, 'runtime'), env, sandbox: 'bubblewrap', pollMs: 50})
  let repos: TestRepos
  let n = 0
  const savedHome = process.env.SVC_HOME

  beforeAll(() => {
    // The broker's global settings file: none here (the Hub's section and the checkout's file speak).
    process.env.SVC_HOME = env.SVC_HOME
    repos = makeRepos()
    writeFileSync(join(repos.checkout, '.gitignore'), '*.log\n.env\nnode_modules/\n')
    commitFile(repos.checkout, '.gitignore', '*.log\n.env\nnode_modules/\n')
    writeFileSync(join(repos.checkout, '.env'), 'API_URL=http://127.0.0.1:1\n')
    chmodSync(join(repos.checkout, '.env'), 0o600)
  })
  afterAll(async () => {
    await runCommand('tmux', ['-L', 'svc', 'kill-server'], {env})
    process.env.SVC_HOME = savedHome
    if (savedHome === undefined) delete process.env.SVC_HOME
    repos?.dispose()
    rmSync(dir, {recursive: true, force: true})
  })

  const start = (p: Partial<StartParams> & {agentId: string}) =>
    launchAgent(
      {name: p.agentId, projectId: 'p', harnessConfig: 'shell', env: {SVC_AUTH_TOKEN: 'tok-secret-123456', SVC_AGENT_ID: p.agentId, PROJECT_SECRET: 'shh-do-not-print'}, workspace: {checkout: repos.checkout, branch: `svc/${p.agentId}`}, ...p},
      {stateDir, hubUrl: 'http://127.0.0.1:9', runtime, runtimeEnv: {PATH: '/usr/local/bin:/usr/bin:/bin'}, writeTemplateFiles},
    )
  const id = () => `env${++n}`
  const workdir = (agentId: string) => agentRepoPaths(stateDir, agentId).workdir
  const failure = async (p: Promise<unknown>) => {
    const err = await p.then(() => null, (e: unknown) => e)
    expect(err).toBeInstanceOf(LaunchError)
    return err as LaunchError
  }

  it('a committed .svc/setup runs in the work tree inside the sandbox, with the agent environment and the copied .env, before the harness; output in the log; restarts run it again only when asked', async () => {
    const script = '#!/bin/sh\necho "setup sees $SVC_AGENT_ID in $(pwd)"\n. ./.env && echo "$API_URL" > from-env.txt\necho run >> runs.txt\n'
    sh(repos.checkout, 'checkout', '-q', '-b', 'with-setup')
    commitFile(repos.checkout, '.svc/setup', script)
    chmodSync(join(repos.checkout, '.svc/setup'), 0o755)
    sh(repos.checkout, 'add', '.svc/setup')
    sh(repos.checkout, 'commit', '-q', '-m', 'setup executable')
    const agentId = id()
    try {
      const launched = await start({agentId, environment: {copy: ['.env']}})
      const wd = workdir(agentId)
      // Done before the start answered: the harness runs only after the setup.
      expect(readFileSync(join(wd, 'from-env.txt'), 'utf8')).toBe('http://127.0.0.1:1\n')
      expect(readFileSync(join(wd, 'runs.txt'), 'utf8')).toBe('run\n')
      // The terminal's output reaches the log file through tmux, a moment after the setup ran.
      const logFile = runtime.logFile(launched.handle.ref)
      await waitFor(() => readFileSync(logFile, 'utf8').includes(`setup sees ${agentId} in ${wd}`), 20_000, "the setup's output in the agent's log")
      expect(await runtime.isRunning(launched.handle)).toBe(true)
      expect(readRecord(agentRepoPaths(stateDir, agentId))?.environment).toMatchObject({copied: {files: 1}, setup: {command: './.svc/setup', from: '.svc/setup'}})

      const restart = async (runSetup: boolean) => {
        await runtime.stop(launched.handle)
        const again = await start({agentId, existingWorkspace: launched.workspace, runSetup, environment: {setup: 'echo never'}})
        expect(await runtime.isRunning(again.handle)).toBe(true)
      }
      await restart(false)
      expect(readFileSync(join(wd, 'runs.txt'), 'utf8')).toBe('run\n')
      // From inside its sandbox the agent plants its setup's status file as a link to a host file
      // that says "0": followed, the broker would take the setup as done before it ran (and the
      // clean-up before the run would remove the host's file).
      const hostStatus = join(dir, 'host-owned-status')
      writeFileSync(hostStatus, '0\n')
      const planted = await execInAgent(stateDir, runtime, null, agentId, ['sh', '-c', `ln -s ${hostStatus} "$HOME/.svc-setup-status" && echo planted`])
      expect(planted.stdout.toString(), planted.stderr).toBe('planted\n')
      await restart(true)
      expect(readFileSync(join(wd, 'runs.txt'), 'utf8')).toBe('run\nrun\n')
      expect(readFileSync(hostStatus, 'utf8')).toBe('0\n')
      await runtime.stop(launched.handle)
    } finally {
      sh(repos.checkout, 'checkout', '-q', 'main')
    }
  })

  it('a failing setup fails the start with its exit code and last lines (secrets masked); the session and the new work tree are gone', async () => {
    const agentId = id()
    const err = await failure(start({agentId, environment: {setup: 'echo "first line"; echo "token $SVC_AUTH_TOKEN and $PROJECT_SECRET"; echo "the last words"; exit 3'}}))
    expect(err.code).toBe('setup_failed')
    expect(err.message).toMatch(/^the setup \(workspace\.setup\) exited with code 3; its last lines:\n/)
    expect(err.message).toContain('the last words')
    expect(err.message).toContain('token **** and ****')
    expect(err.message).not.toContain('tok-secret-123456')
    expect(existsSync(workdir(agentId))).toBe(false)
    expect((await runCommand('tmux', ['-L', 'svc', 'has-session', '-t', `=svc-${agentId}`], {env})).code).not.toBe(0)
  })

  it('a setup that hangs is ended at workspace.setup_timeout and fails the start', async () => {
    const agentId = id()
    const err = await failure(start({agentId, environment: {setup: 'echo waiting forever; sleep 600', setup_timeout: '2s'}}))
    expect(err.message).toMatch(/^the setup \(workspace\.setup\) did not finish within 2 s \(workspace\.setup_timeout\); its last lines:\nwaiting forever/)
    expect((await runCommand('tmux', ['-L', 'svc', 'has-session', '-t', `=svc-${agentId}`], {env})).code).not.toBe(0)
  })

  it('a hostile setup cannot write outside its workspace nor read the checkout or the broker state; a copy cannot reach outside the checkout through links', async () => {
    const agentId = id()
    const secretOutside = join(dir, 'outside-secret')
    writeFileSync(secretOutside, 'host secret\n')
    // A link in the checkout to a file outside it, listed in workspace.copy.
    rmSync(join(repos.checkout, 'linked.env'), {force: true})
    const {symlinkSync} = await import('node:fs')
    symlinkSync(secretOutside, join(repos.checkout, 'linked.env'))
    const tries = [
      `echo pwned > ${repos.checkout}/pwned`,
      `echo pwned > ${stateDir}/pwned`,
      `echo pwned > ${dir}/pwned`,
      `cat ${secretOutside} > leaked-secret`,
      `cat ${repos.checkout}/.env > leaked-env`,
      `cat ${join(stateDir, 'repos', `${agentId}.json`)} > leaked-record`,
    ]
    const launched = await start({agentId, environment: {copy: ['linked.env'], setup: tries.map((t) => `${t} 2>/dev/null`).join('; ') + '; true'}})
    await runtime.stop(launched.handle)
    for (const f of [join(repos.checkout, 'pwned'), join(stateDir, 'pwned'), join(dir, 'pwned')]) expect(existsSync(f), f).toBe(false)
    const wd = workdir(agentId)
    for (const f of ['leaked-secret', 'leaked-env', 'leaked-record']) expect(readFileSync(join(wd, f), 'utf8'), f).toBe('')
    expect(existsSync(join(wd, 'linked.env'))).toBe(false)
    expect(readRecord(agentRepoPaths(stateDir, agentId))?.environment?.copied.skipped).toEqual([{path: 'linked.env', reason: 'a link to a file outside the checkout'}])
    rmSync(join(repos.checkout, 'linked.env'))
  })
})
