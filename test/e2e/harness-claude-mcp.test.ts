import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliEnv, freePort, runCli, startServerProcess, type RunningServer} from '../helpers/cli.js'
import {tmuxAt, waitFor} from '../helpers/live-hub.js'
import {startAnthropicServer, userText, type AnthropicServer, type ScriptedTurn} from '../helpers/model-servers/anthropic.js'

const BIN_DIR = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url))
const KEY = 'sk-ant-e2e-key-for-the-scripted-server-0123456789'
// A child's work (a shell agent types its task): a file of its own, committed, then `completed`.
const WORK_SH = 'echo "$1" > "$1.txt" && git add "$1.txt" && git -c user.name=h -c user.email=h@example.com commit -qm "$1" && svc status completed\n'

/** The tool calls the model made so far in this conversation (the assistant's tool_use blocks). */
const toolCalls = (body: any): Array<{name: string; input: any}> =>
  (body.messages ?? []).filter((m: any) => m.role === 'assistant' && Array.isArray(m.content)).flatMap((m: any) => m.content.filter((b: any) => b.type === 'tool_use'))
const offers = (body: any, name: string) => (body.tools ?? []).some((t: {name: string}) => t.name === name)

/**
 * A real Claude Code lead (only the model is scripted) leads a team of two shell children, once
 * through svc's MCP server (configured by svc in its HOME: `mcp__svc__agent_create`, `agent_wait`,
 * `agent_merge` run `svc mcp` inside the lead's sandbox with the lead's own token) and once through
 * its Bash tool running the svc CLI in its sandbox. Each time it merges both children into its own
 * branch and ends idle, and a person then merges the lead: the checkout's branch has both children's
 * files. Then a Claude Code child whose model calls pass its parent's budget is stopped. One Hub.
 */
describe('a Claude Code lead runs a team through svc mcp and through the svc CLI', {timeout: 900_000}, () => {
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
  // Each conversation is told apart by its task (the first prompt); `scripts` maps a marker in it to the next turn.
  const scripts = new Map<string, (body: any) => ScriptedTurn>()

  beforeAll(async () => {
    for (const d of [home, tmuxDir, checkout, join(home, '.svc')]) mkdirSync(d, {recursive: true})
    model = await startAnthropicServer()
    model.respond((body) => {
      const first = userText({messages: (body.messages ?? []).slice(0, 1)})
      for (const [marker, next] of scripts) if (first.includes(marker)) return next(body)
      return undefined
    })
    // MCP_TIMEOUT: Claude Code gives up on an MCP server that has not answered in 30 s, and `svc
    // mcp` (a Node CLI start in the sandbox) can take longer than that on a loaded machine.
    writeFileSync(join(home, '.svc', 'settings.yaml'), `schema_version: "1"\nharness_configs:\n  claude:\n    harness: claude\n    env:\n      ANTHROPIC_BASE_URL: ${model.url}\n      ANTHROPIC_API_KEY: ${KEY}\n      MCP_TIMEOUT: "180000"\n`)
    git('init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# demo\n')
    writeFileSync(join(checkout, 'work.sh'), WORK_SH)
    // The project's own Claude Code settings (in every agent's work tree) let a lead run `svc ...`
    // and `sleep` with its Bash tool without a permission prompt, as a user allows tools.
    mkdirSync(join(checkout, '.claude'))
    writeFileSync(join(checkout, '.claude', 'settings.json'), JSON.stringify({permissions: {allow: ['Bash(svc:*)', 'Bash(sleep:*)']}}))
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
  }, 180_000)
  afterAll(async () => {
    const pids = tmux('list-panes', '-a', '-F', '#{pane_pid}').stdout.split('\n').filter(Boolean)
    await server?.stop()
    tmux('kill-server')
    await waitFor(() => pids.every((pid) => !existsSync(`/proc/${pid}`)), 15_000, 'the harness processes to exit').catch(() => {})
    await model?.close()
    rmSync(root, {recursive: true, force: true, maxRetries: 10, retryDelay: 200})
  })

  /** A failed wait, with what the agents and the model's last conversation turn show. */
  const explain = async (err: Error): Promise<never> => {
    const states = (await agents()).map((a) => `${a.name}: ${a.phase}/${a.activity} ${a.detail} ${a.error ?? ''} ${JSON.stringify(a.usage)}\n${tmux('capture-pane', '-p', '-t', `=svc-${a.id}:`).stdout.trimEnd()}`)
    const last = model.mainRequests().at(-1)
    throw new Error(`${err.message}\nagents:\n${states.join('\n')}\nlast model request: ${last ? JSON.stringify(last.body.messages.slice(-2)).slice(-3000) : 'none'}`)
  }

  /** The lead is idle after its last scripted step; its children are merged into its branch; a person merges the lead. */
  async function leadMergedByPerson(leadId: string, marker: string, children: string[], lastStep: (body: any) => boolean) {
    const idle = await waitFor(async () => {
      const lead = (await agents()).find((a) => a.id === leadId && a.activity === 'idle')
      const last = model.mainRequests().filter((q) => userText({messages: q.body.messages.slice(0, 1)}).includes(marker)).at(-1)
      return lead && last && lastStep(last.body) ? lead : undefined
    }, 180_000, 'the lead idle after merging its children').catch(explain)
    const log = execFileSync('git', ['log', '--format=%s', 'HEAD'], {cwd: idle.workspace.path, encoding: 'utf8'}).split('\n')
    for (const c of children) {
      expect(readFileSync(join(idle.workspace.path, `${c}.txt`), 'utf8')).toBe(`${c}\n`)
      expect(log).toContain(c)
    }
    expect(execFileSync('git', ['status', '--porcelain'], {cwd: idle.workspace.path, encoding: 'utf8'})).toBe('')
    const tree = await svc(['agent', 'tree', idle.name, '--json'])
    expect(tree.code, tree.stderr).toBe(0)
    expect(tree.json.trees[0].tree.children.map((n: any) => n.agent.name).sort()).toEqual(children)
    // A person lands the lead: the checkout's branch gets both children's work.
    const merged = await svc(['agent', 'merge', idle.name])
    expect(merged.code, merged.stderr + merged.stdout).toBe(0)
    for (const c of children) expect(readFileSync(join(checkout, `${c}.txt`), 'utf8')).toBe(`${c}\n`)
    expect(git('status', '--porcelain')).toBe('')
  }

  it('through svc mcp: creates two children (agent_create), waits for them (agent_wait), merges both (agent_merge); a person merges the lead', async () => {
    // Claude Code may send its first request before its MCP servers are up (then it offers them
    // later): the model calls svc's tools once they are offered, and waits with Bash until then.
    const steps = [
      {name: 'mcp__svc__agent_create', input: {name: 'alpha', harness: 'shell', task: 'sh work.sh alpha'}},
      {name: 'mcp__svc__agent_create', input: {name: 'beta', harness: 'shell', task: 'sh work.sh beta'}},
      {name: 'mcp__svc__agent_wait', input: {agent: 'alpha', for: 'done', timeoutSeconds: 120}},
      {name: 'mcp__svc__agent_wait', input: {agent: 'beta', for: 'done', timeoutSeconds: 120}},
      {name: 'mcp__svc__agent_merge', input: {agent: 'alpha'}},
      {name: 'mcp__svc__agent_merge', input: {agent: 'beta'}},
    ]
    const done = (body: any) => toolCalls(body).filter((c) => c.name.startsWith('mcp__svc__')).length
    scripts.set('MCP-LEAD', (body) => {
      if (!offers(body, 'mcp__svc__agent_create')) return {tool: {name: 'Bash', input: {command: 'sleep 1', description: 'wait for the svc tools'}}}
      const next = steps[done(body)]
      return next ? {tool: next} : {text: 'Merged alpha and beta.'}
    })
    const r = await svc(['agent', 'create', 'lead', '--harness', 'claude', 'MCP-LEAD: run a team of two', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    const lead = r.json.agent
    const first = await model.waitForRequest((q) => q.main && offers(q.body, 'mcp__svc__agent_create'), 240_000, 'a model request offering the svc tools')
    // svc's tools are offered to the model, with their schemas.
    const tools = (first.body.tools as Array<{name: string; input_schema: any}>).filter((t) => t.name.startsWith('mcp__svc__'))
    expect(tools.map((t) => t.name).sort()).toEqual(['agent_create', 'agent_diff', 'agent_get', 'agent_list', 'agent_merge', 'agent_message', 'agent_tree', 'agent_wait', 'artifact_publish'].map((n) => `mcp__svc__${n}`))
    expect(tools.find((t) => t.name === 'mcp__svc__agent_create')!.input_schema.required).toEqual(['name'])

    const alpha = await waitFor(async () => (await agents()).find((a) => a.name === 'alpha' && a.workspace), 240_000, 'the alpha agent with its workspace').catch(explain)
    expect(alpha.parent).toEqual({id: lead.id, name: 'lead'})
    expect(alpha.workspace).toMatchObject({branch: 'svc/alpha', baseRef: 'svc/lead'})
    // Both waits answered the child's record once it reported its work completed; both merges took.
    const merged = await model.waitForRequest((q) => q.main && done(q.body) === steps.length && JSON.stringify(q.body.messages).match(/\\"merged\\": ?true/g)?.length === 2, 240_000, 'both merge results in a request').catch(explain)
    expect(JSON.stringify(merged.body.messages).match(/\\"activity\\": ?\\"completed/g)?.length).toBeGreaterThanOrEqual(2)
    await leadMergedByPerson(lead.id, 'MCP-LEAD', ['alpha', 'beta'], (body) => done(body) === steps.length)
  })

  it('through Bash: the same lead runs svc agent create, svc agent wait and svc agent merge in its sandbox; a person merges the lead', async () => {
    const commands = [
      'svc agent create gamma --harness shell "sh work.sh gamma"',
      'svc agent create delta --harness shell "sh work.sh delta"',
      'svc agent wait gamma --for done --timeout 2m',
      'svc agent wait delta --for done --timeout 2m',
      'svc agent merge gamma',
      'svc agent merge delta',
    ]
    const ran = (body: any) => toolCalls(body).filter((c) => c.name === 'Bash' && String(c.input.command).startsWith('svc ')).length
    scripts.set('BASH-LEAD', (body) => {
      const next = commands[ran(body)]
      return next ? {tool: {name: 'Bash', input: {command: next, description: 'svc'}}} : {text: 'Merged gamma and delta.'}
    })
    const r = await svc(['agent', 'create', 'bashlead', '--harness', 'claude', 'BASH-LEAD: run a team of two', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    const lead = r.json.agent
    const gamma = await waitFor(async () => (await agents()).find((a) => a.name === 'gamma' && a.workspace), 300_000, 'the gamma agent with its workspace').catch(explain)
    expect(gamma.parent).toEqual({id: lead.id, name: 'bashlead'})
    expect(gamma.workspace).toMatchObject({branch: 'svc/gamma', baseRef: 'svc/bashlead'})
    const last = await model.waitForRequest((q) => q.main && ran(q.body) === commands.length && /Merged svc\/delta into svc\/bashlead/.test(userText(q.body)), 240_000, 'the output of the last merge in a request').catch(explain)
    // Every command ran without a permission prompt, and each merge answered the CLI's line.
    expect(userText(last.body)).toMatch(/Merged svc\/gamma into svc\/bashlead/)
    await leadMergedByPerson(lead.id, 'BASH-LEAD', ['delta', 'gamma'], (body) => ran(body) === commands.length)
  })

  it("a Claude Code child whose model calls pass its parent's maxModelCalls is stopped with its parent (limits_exceeded)", async () => {
    const bystander = await svc(['agent', 'create', 'bystander', '--harness', 'shell', '--json'])
    expect(bystander.code, bystander.stderr).toBe(0)
    const boss = await svc(['agent', 'create', 'boss', '--harness', 'shell', '--max-model-calls', '3', '--json'])
    expect(boss.code, boss.stderr).toBe(0)
    // Read-only tool calls (no permission asked, no shell): five model calls in one turn.
    scripts.set('SPEND', (body) => (toolCalls(body).length < 4 ? {tool: {name: 'Glob', input: {pattern: '*.md'}}} : {text: 'Spent.'}))
    const child = await svc(['agent', 'create', 'spender', '--parent', 'boss', '--harness', 'claude', 'SPEND: work', '--json'])
    expect(child.code, child.stderr + child.stdout).toBe(0)
    expect(child.json.agent.limits.maxModelCalls).toBe(3)
    const stopped = await waitFor(async () => {
      const list = await agents()
      const pair = ['boss', 'spender'].map((n) => list.find((a) => a.name === n))
      return pair.every((a) => a?.phase === 'stopped' && a.activity === 'limits_exceeded') ? pair : undefined
    }, 300_000, 'boss and spender stopped for limits_exceeded').catch(explain)
    for (const a of stopped) expect(a.detail).toMatch(/max_model_calls \(3\) exceeded: \d+ model calls by boss.*limits\.maxModelCalls of agent boss/)
    // An agent outside boss's subtree keeps running.
    expect((await agents()).find((a) => a.name === 'bystander')?.phase).toBe('running')
  })
})
