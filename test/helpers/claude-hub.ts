import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {runCli, startLocalRuntimeServer, type CliResult, type RunningServer} from './cli.js'
import {tmuxAt, waitFor} from './live-hub.js'
import {startAnthropicServer, type AnthropicServer} from './model-servers/anthropic.js'

const BIN_DIR = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url))
export const CLAUDE_KEY = 'sk-ant-e2e-key-for-the-scripted-server-0123456789'

/** A workstation Hub whose agents run the real `claude` CLI against a scripted model. */
export interface ClaudeHub {
  root: string
  home: string
  checkout: string
  model: AnthropicServer
  server: RunningServer
  /** The CLI's environment (SVC_HUB_ENDPOINT set); `serverEnv` starts the same Hub again. */
  env: NodeJS.ProcessEnv
  serverEnv: NodeJS.ProcessEnv
  /** The Hub's dev token. */
  token: string
  /** `svc <args>` in the checkout (90 s bound). */
  svc(args: string[], opts?: {cwd?: string; env?: NodeJS.ProcessEnv}): Promise<CliResult>
  /** git in the checkout, as a test author. */
  git(...args: string[]): string
  tmux(...args: string[]): ReturnType<typeof tmuxAt>
  /** GET `path` on the Hub with the dev token; throws on a non-2xx answer. */
  api(path: string): Promise<any>
  /** Stops the Hub, its tmux server and the harness processes, the model; removes the files. */
  stop(): Promise<void>
}

/**
 * A real `svc server start` (SQLite) in a temp HOME whose co-located broker runs agents on the
 * local runtime (tmux, sandboxed), with the `claude` harness config pointing at a scripted
 * Anthropic server, and a registered git checkout with one commit. `settings` is YAML added to
 * the settings file before the harness config (webhooks, approvals rules, ...).
 */
export async function startClaudeHub(prefix: string, opts: {settings?: (model: AnthropicServer) => string} = {}): Promise<ClaudeHub> {
  const root = mkdtempSync(join(tmpdir(), `svc-e2e-${prefix}-`))
  const home = join(root, 'home')
  const tmuxDir = join(root, 'tmux')
  const checkout = join(root, 'checkout')
  for (const d of [home, tmuxDir, checkout, join(home, '.svc')]) mkdirSync(d, {recursive: true})
  const model = await startAnthropicServer()
  writeFileSync(
    join(home, '.svc', 'settings.yaml'),
    `schema_version: "1"\n${opts.settings?.(model) ?? ''}` +
      `harness_configs:\n  claude:\n    harness: claude\n    env:\n      ANTHROPIC_BASE_URL: ${model.url}\n      ANTHROPIC_API_KEY: ${CLAUDE_KEY}\n`,
  )
  const git = (...args: string[]) =>
    execFileSync('git', args, {cwd: checkout, encoding: 'utf8', env: {...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com'}})
  git('init', '-q', '-b', 'main')
  writeFileSync(join(checkout, 'README.md'), '# demo\n')
  git('add', '-A')
  git('commit', '-q', '-m', 'init')
  const {server, serverEnv, env} = await startLocalRuntimeServer(home, tmuxDir, {PATH: `${BIN_DIR}:${process.env.PATH}`})
  const token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
  const tmux = (...args: string[]) => tmuxAt(tmuxDir, args)
  const hub: ClaudeHub = {
    root,
    home,
    checkout,
    model,
    server,
    env,
    serverEnv,
    token,
    svc: (args, o = {}) => runCli(args, {env: o.env ?? env, cwd: o.cwd ?? checkout, timeoutMs: 90_000}),
    git,
    tmux,
    api: async (path) => {
      const res = await fetch(`${hub.server.url}${path}`, {headers: {authorization: `Bearer ${token}`}})
      if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`)
      return res.json()
    },
    stop: async () => {
      const pids = tmux('list-panes', '-a', '-F', '#{pane_pid}').stdout.split('\n').filter(Boolean)
      await hub.server.stop()
      tmux('kill-server')
      await waitFor(() => pids.every((pid) => !existsSync(`/proc/${pid}`)), 15_000, 'the harness processes to exit').catch(() => {})
      await model.close()
      rmSync(root, {recursive: true, force: true, maxRetries: 10, retryDelay: 200})
    },
  }
  const reg = await hub.svc(['project', 'register', '--json'])
  if (reg.code !== 0) {
    await hub.stop()
    throw new Error(`svc project register failed: ${reg.stderr}${reg.stdout}`)
  }
  return hub
}
