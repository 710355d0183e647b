import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliEnv, freePort, runCli, startServerProcess, type RunningServer} from '../helpers/cli.js'
import {tmuxAt, waitFor} from '../helpers/live-hub.js'
import {startAnthropicServer, type AnthropicServer} from '../helpers/model-servers/anthropic.js'

const BIN_DIR = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url))
const KEY = 'sk-ant-e2e-key-for-the-scripted-server-0123456789'

/**
 * A real Claude Code lead (only the model is scripted) uses svc's MCP server, configured by svc in
 * its HOME: the model sees the `mcp__svc__*` tools and calls `mcp__svc__agent_create`, which runs
 * `svc mcp` inside the lead's sandbox with the lead's own token, so the new agent is its child;
 * then `agent_wait` until the child (a shell agent that commits and reports `completed`) is done,
 * and `agent_merge`, which lands the child's commit in the lead's branch and work tree.
 */
describe('a Claude Code lead creates, waits for and merges its child through svc mcp', {timeout: 300_000}, () => {
  const root = mkdtempSync(join(tmpdir(), 'svc-e2e-claude-mcp-'))
  const home = join(root, 'home')
  const tmuxDir = join(root, 'tmux')
  const checkout = join(root, 'checkout')
  let model: AnthropicServer
  let server: RunningServer
  let env: NodeJS.ProcessEnv
  let token: string
  const tmux = (...args: string[]) => tmuxAt(tmuxDir, args)
  const svc = (args: string[]) => runCli(args, {env, cwd: checkout, timeoutMs: 90_000})
  const git = (...args: string[]) => execFileSync('git', args, {cwd: checkout, encoding: 'utf8', env: {...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com'}})
  const agents = async () => {
    const res = await fetch(`${server.url}/api/v1/agents`, {headers: {authorization: `Bearer ${token}`}})
    return (await res.json()).agents as any[]
  }

  beforeAll(async () => {
    for (const d of [home, tmuxDir, checkout, join(home, '.svc')]) mkdirSync(d, {recursive: true})
    model = await startAnthropicServer()
    writeFileSync(join(home, '.svc', 'settings.yaml'), `schema_version: "1"\nharness_configs:\n  claude:\n    harness: claude\n    env:\n      ANTHROPIC_BASE_URL: ${model.url}\n      ANTHROPIC_API_KEY: ${KEY}\n`)
    git('init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# demo\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
    const serverEnv = cliEnv(home, {
      PATH: `${BIN_DIR}:${process.env.PATH}`,
      TMUX_TMPDIR: tmuxDir,
      SVC_SERVER_BROKER_PORT: String(await freePort()),
      DOCKER_HOST: 'unix:///nonexistent/docker.sock',
      CONTAINER_HOST: 'unix:///nonexistent/podman.sock',
    })
    server = await startServerProcess([], serverEnv, 60_000)
    env = {...serverEnv, SVC_HUB_ENDPOINT: server.url}
    token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    const reg = await svc(['project', 'register', '--json'])
    expect(reg.code, reg.stderr + reg.stdout).toBe(0)
  })
  afterAll(async () => {
    const pids = tmux('list-panes', '-a', '-F', '#{pane_pid}').stdout.split('\n').filter(Boolean)
    await server?.stop()
    tmux('kill-server')
    await waitFor(() => pids.every((pid) => !existsSync(`/proc/${pid}`)), 15_000, 'the harness processes to exit').catch(() => {})
    await model?.close()
    rmSync(root, {recursive: true, force: true, maxRetries: 10, retryDelay: 200})
  })

  it('the model creates its child (mcp__svc__agent_create), waits for it (agent_wait) and merges it into its own branch (agent_merge)', async () => {
    // Claude Code may send its first request before its MCP servers are up (then it offers them
    // later): the scripted model calls the tool once it is offered, and waits with Bash until then.
    const TASK = 'echo feature > feature.txt && git add feature.txt && git -c user.name=h -c user.email=h@example.com commit -qm feature && svc status completed'
    model.respond((body) => {
      const said = JSON.stringify(body.messages)
      if (!(body.tools ?? []).some((t: {name: string}) => t.name === 'mcp__svc__agent_create')) return {tool: {name: 'Bash', input: {command: 'sleep 1', description: 'wait for the svc tools'}}}
      if (!said.includes('mcp__svc__agent_create')) return {tool: {name: 'mcp__svc__agent_create', input: {name: 'helper', harness: 'shell', task: TASK}}}
      if (!said.includes('mcp__svc__agent_wait')) return {tool: {name: 'mcp__svc__agent_wait', input: {agent: 'helper', for: 'done', timeoutSeconds: 120}}}
      if (!said.includes('mcp__svc__agent_merge')) return {tool: {name: 'mcp__svc__agent_merge', input: {agent: 'helper'}}}
      return {text: 'Merged helper.'}
    })
    const r = await svc(['agent', 'create', 'lead', '--harness', 'claude', 'start a helper', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    const lead = r.json.agent
    const first = await model.waitForRequest((q) => q.main && (q.body.tools ?? []).some((t: {name: string}) => t.name.startsWith('mcp__svc__')), 90_000, 'a model request offering the svc tools')
    // svc's tools are offered to the model, with their schemas.
    const tools = (first.body.tools as Array<{name: string; input_schema: any}>).filter((t) => t.name.startsWith('mcp__svc__'))
    expect(tools.map((t) => t.name).sort()).toEqual(['agent_create', 'agent_diff', 'agent_get', 'agent_list', 'agent_merge', 'agent_message', 'agent_tree', 'agent_wait', 'artifact_publish'].map((n) => `mcp__svc__${n}`))
    expect(tools.find((t) => t.name === 'mcp__svc__agent_create')!.input_schema.required).toEqual(['name'])

    const helper = await waitFor(async () => (await agents()).find((a) => a.name === 'helper' && a.phase === 'running'), 90_000, 'the helper agent running')
    expect(helper.parent).toEqual({id: lead.id, name: 'lead'})
    expect(helper.workspace).toMatchObject({branch: 'svc/helper', baseRef: 'svc/lead'})
    // The tool's answer (the Hub's record of the child) went back to the model.
    const second = await model.waitForRequest((q) => q.main && JSON.stringify(q.body.messages).includes('tool_result') && JSON.stringify(q.body.messages).includes(helper.id), 90_000, 'the tool result in the next request')
    expect(JSON.stringify(second.body.messages)).toContain('svc/helper')
    // It waited for the child to be done, then merged the child's commit into its branch and work tree.
    const merged = await model.waitForRequest((q) => q.main && /\\"merged\\": ?true/.test(JSON.stringify(q.body.messages)), 60_000, 'the merge result in a request')
    // The wait answered the child's record once it reported its work completed.
    expect(JSON.stringify(merged.body.messages)).toMatch(/\\"activity\\": ?\\"completed/)
    const idle = await waitFor(async () => (await agents()).find((a) => a.id === lead.id && a.activity === 'idle' && JSON.stringify(model.mainRequests().at(-1)?.body.messages ?? '').includes('mcp__svc__agent_merge')), 90_000, 'the lead idle after merging')
    expect(readFileSync(join(idle.workspace.path, 'feature.txt'), 'utf8')).toBe('feature\n')
    expect(execFileSync('git', ['log', '--format=%s', 'HEAD'], {cwd: idle.workspace.path, encoding: 'utf8'}).split('\n')).toContain('feature')
    expect(execFileSync('git', ['status', '--porcelain'], {cwd: idle.workspace.path, encoding: 'utf8'})).toBe('')
  })
})
