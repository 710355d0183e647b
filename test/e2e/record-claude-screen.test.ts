import {copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {execFileSync} from 'node:child_process'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, describe, expect, it} from 'vitest'
import {cliEnv, freePort, runCli, startServerProcess, type RunningServer} from '../helpers/cli.js'
import {tmuxAt, waitFor} from '../helpers/live-hub.js'
import {startAnthropicServer, type AnthropicServer} from '../helpers/model-servers/anthropic.js'

const BIN_DIR = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url))
const FIXTURE = fileURLToPath(new URL('../fixtures/claude-permission-prompt.ansi', import.meta.url))

/**
 * Records test/fixtures/claude-permission-prompt.ansi: the raw pane output (the local runtime's
 * pipe-pane log, 200x50) of the real Claude Code CLI, run by a workstation Hub against the
 * scripted model server, up to its permission prompt. Run by hand when the fixture must be
 * renewed: SVC_RECORD_FIXTURES=1 npx vitest run test/e2e/record-claude-screen.test.ts
 */
describe('record a Claude Code screen', {timeout: 300_000}, () => {
  const root = mkdtempSync(join(tmpdir(), 'svc-record-claude-'))
  const home = join(root, 'home')
  const tmuxDir = join(root, 'tmux')
  const checkout = join(root, 'checkout')
  let model: AnthropicServer | undefined
  let server: RunningServer | undefined
  afterAll(async () => {
    await server?.stop()
    tmuxAt(tmuxDir, ['kill-server'])
    await model?.close()
    rmSync(root, {recursive: true, force: true, maxRetries: 10, retryDelay: 200})
  })

  it('writes the fixture at the permission prompt', async () => {
    for (const d of [home, tmuxDir, checkout, join(home, '.svc')]) mkdirSync(d, {recursive: true})
    model = await startAnthropicServer()
    writeFileSync(join(home, '.svc', 'settings.yaml'), `schema_version: "1"\nharness_configs:\n  claude:\n    harness: claude\n    env:\n      ANTHROPIC_BASE_URL: ${model.url}\n      ANTHROPIC_API_KEY: sk-ant-recording-key-0123456789\n`)
    const git = (...args: string[]) => execFileSync('git', args, {cwd: checkout, env: {...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com'}})
    git('init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# demo\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
    const env = cliEnv(home, {PATH: `${BIN_DIR}:${process.env.PATH}`, TMUX_TMPDIR: tmuxDir, SVC_SERVER_BROKER_PORT: String(await freePort()), DOCKER_HOST: 'unix:///nonexistent/docker.sock', CONTAINER_HOST: 'unix:///nonexistent/podman.sock'})
    server = await startServerProcess([], env, 60_000)
    const svc = (args: string[]) => runCli(args, {env: {...env, SVC_HUB_ENDPOINT: server!.url}, cwd: checkout, timeoutMs: 90_000})
    expect((await svc(['project', 'register', '--json'])).code).toBe(0)
    model.enqueue({tool: {name: 'Bash', input: {command: 'echo hello > hello.txt', description: 'write hello.txt'}}}, {text: 'Wrote hello.txt.'})
    const r = await svc(['agent', 'create', 'fix', '--harness', 'claude', 'write hello into hello.txt', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    const id = r.json.agent.id as string
    const log = join(home, '.svc', 'broker', 'logs', `svc-${id}.log`)
    const pane = () => tmuxAt(tmuxDir, ['capture-pane', '-p', '-t', `=svc-${id}:`]).stdout
    await waitFor(() => /Do you want to proceed\?/.test(pane()), 120_000, 'the permission dialog on the screen')
    // The dialog is drawn; the log catches up with the pane.
    await waitFor(() => existsSync(log) && readFileSync(log, 'latin1').includes('proceed?'), 30_000, 'the dialog in the log')
    await new Promise((r) => setTimeout(r, 1000))
    copyFileSync(log, FIXTURE)
    writeFileSync(FIXTURE.replace(/\.ansi$/, '.pane.txt'), pane())
  })
})
