import {existsSync, readFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startClaudeHub, type ClaudeHub} from '../helpers/claude-hub.js'
import {waitFor} from '../helpers/live-hub.js'
import {userText, type AnthropicServer} from '../helpers/model-servers/anthropic.js'

/**
 * Issue 28's done-when for Claude Code: a real `svc server start` whose co-located broker runs
 * the real `claude` CLI (scripted model). Claude Code asks to run Bash; `svc agent approve` lets
 * it run and `svc agent approve --deny --reason` stops it with the reason in the tool result,
 * both through its PermissionRequest hook: no key is ever sent to its terminal. A rule of
 * `approvals.rules` allows `npm test` with nobody asked; the webhook hears `approval_requested`
 * once per request a person had to answer.
 */
describe('approvals with the claude harness', {timeout: 600_000}, () => {
  let hub: ClaudeHub
  let model: AnthropicServer
  let agent: {id: string; workspace: {path: string}}
  let hooks: Server
  const deliveries: any[] = []
  const pane = () => hub.tmux('capture-pane', '-p', '-t', `=svc-${agent.id}:`).stdout
  const svc = (args: string[]) => hub.svc(args)
  const api = (path: string) => hub.api(path)
  const until = async <T>(read: () => Promise<T | undefined>, what: string, timeoutMs = 90_000): Promise<T> => {
    try {
      return await waitFor(read, timeoutMs, what)
    } catch (err) {
      const seen = agent ? JSON.stringify((await api(`/api/v1/agents/${agent.id}`).catch(() => null))?.agent, null, 1) : ''
      const approvals = agent ? JSON.stringify((await api(`/api/v1/agents/${agent.id}/approvals`).catch(() => null))?.approvals) : ''
      const logs = agent ? await fetch(`${hub.server.url}/api/v1/agents/${agent.id}/logs`, {headers: {authorization: `Bearer ${hub.token}`}}).then((r) => r.text()).catch(() => '') : ''
      throw new Error(`${(err as Error).message}\nagent: ${seen}\napprovals: ${approvals}\nlogs:\n${logs.slice(-3000)}\npane:\n${agent ? pane() : ''}`)
    }
  }
  const pending = () => until(async () => (await api(`/api/v1/agents/${agent.id}/approvals?state=pending`)).approvals[0], 'a pending approval', 240_000)
  const idleAfter = (turns: number) => until(async () => {
    const a = (await api(`/api/v1/agents/${agent.id}`)).agent
    return a.activity === 'idle' && a.turns >= turns ? a : undefined
  }, `idle after turn ${turns}`, 240_000)

  beforeAll(async () => {
    hooks = createServer((req, res) => {
      let raw = ''
      req.on('data', (d) => (raw += d))
      req.on('end', () => {
        deliveries.push(JSON.parse(raw))
        res.end()
      })
    })
    await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r))
    const hooksUrl = `http://127.0.0.1:${(hooks.address() as {port: number}).port}/hook`
    hub = await startClaudeHub('approvals', {
      settings: () =>
        `server:\n  notification_channels:\n    - type: webhook\n      url: ${hooksUrl}\n      allow_private: true\n      events: [approval_requested]\n` +
        `approvals:\n  rules:\n    - {tool: Bash, match: "npm test*", decision: allow}\n`,
    })
    model = hub.model
  })
  afterAll(async () => {
    await hub?.stop()
    hooks?.close()
  })

  it('svc agent approve lets the Bash command run, through the hook (no key sent)', async () => {
    model.enqueue({tool: {name: 'Bash', input: {command: 'echo one > one.txt', description: 'write one.txt'}}}, {text: 'Wrote one.txt.'})
    const r = await svc(['agent', 'create', 'fix', '--harness', 'claude', 'write one into one.txt', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    agent = r.json.agent
    const asked = await pending()
    expect(asked).toMatchObject({agentId: agent.id, tool: 'Bash', summary: 'echo one > one.txt', state: 'pending'})
    const a = (await api(`/api/v1/agents/${agent.id}`)).agent
    expect(a).toMatchObject({activity: 'waiting_for_input', detail: 'Permission: Bash: echo one > one.txt'})
    // The waiter sees what it waits for.
    const waited = await svc(['agent', 'wait', 'fix', '--for', 'input', '--json'])
    expect(waited.code, waited.stderr).toBe(0)
    expect(waited.json.approval).toMatchObject({id: asked.id, summary: 'echo one > one.txt'})
    const listed = await svc(['approvals', '--json'])
    expect(listed.json.approvals.map((x: any) => x.id)).toEqual([asked.id])

    const ok = await svc(['agent', 'approve', 'fix', '--json'])
    expect(ok.code, ok.stderr + ok.stdout).toBe(0)
    expect(ok.json.approval).toMatchObject({id: asked.id, state: 'allowed', decidedBy: {kind: 'user'}})
    await idleAfter(1)
    expect(readFileSync(join(agent.workspace.path, 'one.txt'), 'utf8')).toBe('one\n')
    // Nothing pending is left, and a second approve has nothing to decide.
    const none = await svc(['agent', 'approve', 'fix', '--json'])
    expect(none.code).not.toBe(0)
    expect(none.json.error.code).toBe('not_found')
  })

  it('svc agent approve --deny --reason stops the command; the model reads the reason in the tool result', async () => {
    model.enqueue({tool: {name: 'Bash', input: {command: 'echo two > two.txt', description: 'write two.txt'}}}, {text: 'Not writing two.txt.'})
    const before = model.mainRequests().length
    expect((await svc(['message', 'fix', 'now write two into two.txt'])).code).toBe(0)
    const asked = await pending()
    expect(asked.summary).toBe('echo two > two.txt')
    const no = await svc(['agent', 'approve', 'fix', '--deny', '--reason', 'not on a Friday', '--json'])
    expect(no.code, no.stderr + no.stdout).toBe(0)
    expect(no.json.approval).toMatchObject({id: asked.id, state: 'denied', reason: 'not on a Friday'})
    const result = await model.waitForRequest((q) => q.main && model.mainRequests().indexOf(q) > before && userText(q.body).includes('not on a Friday'), 90_000, 'the deny reason as the tool result')
    expect(userText(result.body)).toContain('not on a Friday')
    await idleAfter(2)
    expect(existsSync(join(agent.workspace.path, 'two.txt'))).toBe(false)
  })

  it('a rule allows npm test with nobody asked; the webhook heard approval_requested once per request a person answered', async () => {
    model.enqueue({tool: {name: 'Bash', input: {command: 'npm test', description: 'run the tests'}}}, {text: 'Tests ran.'})
    expect((await svc(['message', 'fix', 'run the tests'])).code).toBe(0)
    const decided = await until(async () => (await api(`/api/v1/agents/${agent.id}/approvals`)).approvals.find((x: any) => x.summary === 'npm test'), 'the rule-decided approval', 240_000)
    expect(decided).toMatchObject({state: 'allowed', decidedBy: {kind: 'rule', index: 0}})
    await idleAfter(3)
    const all = (await api(`/api/v1/agents/${agent.id}/approvals`)).approvals
    expect(all.map((x: any) => [x.summary, x.state])).toEqual([
      ['echo one > one.txt', 'allowed'],
      ['echo two > two.txt', 'denied'],
      ['npm test', 'allowed'],
    ])
    const asked = all.filter((x: any) => x.decidedBy.kind === 'user').map((x: any) => x.id)
    await until(async () => (deliveries.length >= 2 ? true : undefined), 'the webhook deliveries', 30_000)
    expect(deliveries.map((d) => [d.event, d.approval.id])).toEqual(asked.map((id: string) => ['approval_requested', id]))
  })
})
