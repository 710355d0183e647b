import {execFileSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect} from '../helpers/hub.js'
import {cliEnv} from '../helpers/cli.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'
import {connectSvcMcp} from '../helpers/mcp-client.js'

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, {cwd, encoding: 'utf8'}).trim()
const TOOLS = ['agent_create', 'agent_diff', 'agent_get', 'agent_list', 'agent_merge', 'agent_message', 'agent_tree', 'agent_wait', 'artifact_publish']

/**
 * `svc mcp` (CONTRACT.md "Teams", docs/teams.md): the real CLI process, with a real shell agent's
 * token and environment as a harness would start it, driven by the SDK's own stdio client against
 * a live Hub. The tools act as that agent: its new agent is its child, and it merges that child.
 */
describeEachDialect('svc mcp: the tools as the agent', (dialect) => {
  let hub: LiveHub
  let checkout: string
  let home: string
  let projectId: string
  let lead: any
  let client: Client
  let token: string
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = (await client.callTool({name, arguments: args})) as {isError?: boolean; content: Array<{type: string; text: string}>; structuredContent?: any}
    return {isError: !!r.isError, body: JSON.parse(r.content[0]!.text), structured: r.structuredContent}
  }

  beforeAll(async () => {
    hub = await startLiveHub(dialect)
    checkout = mkdtempSync(join(tmpdir(), 'svc-mcp-'))
    home = mkdtempSync(join(tmpdir(), 'svc-mcp-home-'))
    git(checkout, 'init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# mcp\n')
    git(checkout, 'add', '.')
    git(checkout, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first')
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'mcp', localPath: checkout}})).body.project.id
    lead = (await hub.request('POST', '/api/v1/agents', {body: {name: 'lead', projectId, harnessConfig: 'shell', role: 'full'}})).body.agent
    expect(lead).toMatchObject({phase: 'running', parent: null})
    token = (await hub.services.agentTokens.mint((await hub.store.agents.get(lead.id))!)).token
    // The agent's environment as its harness has it (no user credential anywhere: HOME is empty).
    const env = cliEnv(home, {SVC_HUB_ENDPOINT: hub.url, SVC_AUTH_TOKEN: token, SVC_AGENT_ID: lead.id, SVC_PROJECT_ID: projectId})
    client = await connectSvcMcp(env, home)
  }, 120_000)
  afterAll(async () => {
    await client?.close()
    await hub?.dispose()
    for (const d of [checkout, home]) if (d) rmSync(d, {recursive: true, force: true})
  })

  it('lists the tools with their input schemas', async () => {
    const {tools} = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS)
    const create = tools.find((t) => t.name === 'agent_create')!
    expect(create.inputSchema).toMatchObject({type: 'object', required: ['name']})
    expect(Object.keys(create.inputSchema.properties!).sort()).toEqual(['harness', 'limits', 'name', 'task'])
    expect(Object.keys((create.inputSchema.properties!.limits as any).properties).sort()).toEqual(['maxChildren', 'maxCostUsd', 'maxDepth', 'maxDurationSeconds', 'maxModelCalls', 'maxTurns'])
    for (const name of ['agent_get', 'agent_wait', 'agent_diff', 'agent_merge']) expect(tools.find((t) => t.name === name)!.inputSchema.required).toEqual(['agent'])
    expect(tools.find((t) => t.name === 'agent_message')!.inputSchema.required).toEqual(['agent', 'message'])
    expect(tools.find((t) => t.name === 'artifact_publish')!.inputSchema.required).toEqual(['path'])
  })

  it("creates a child of the agent, shows it, its diff and the tree, messages it and merges its work into the agent's branch", async () => {
    const created = await call('agent_create', {name: 'helper', harness: 'shell', limits: {maxTurns: 5}})
    expect(created.isError, JSON.stringify(created.body)).toBe(false)
    const helper = created.body.agent
    expect(helper).toMatchObject({name: 'helper', phase: 'running', parent: {id: lead.id, name: 'lead'}})
    expect(helper.workspace).toMatchObject({branch: 'svc/helper', baseRef: 'svc/lead'})
    expect(helper.limits.maxTurns).toBe(5)
    expect(created.structured).toEqual(created.body)

    const listed = await call('agent_list')
    expect(listed.body.agents.map((a: {name: string}) => a.name).sort()).toEqual(['helper', 'lead'])
    expect((await call('agent_get', {agent: 'helper'})).body.agent).toMatchObject({id: helper.id, parent: {id: lead.id}})

    const tree = await call('agent_tree')
    expect(tree.body.tree.agent.id).toBe(lead.id)
    expect(tree.body.tree.children.map((n: any) => n.agent.name)).toEqual(['helper'])
    expect(tree.body.totals.agents).toBe(2)

    writeFileSync(join(helper.workspace.path, 'feature.txt'), 'by the helper\n')
    git(helper.workspace.path, 'add', 'feature.txt')
    git(helper.workspace.path, '-c', 'user.name=helper', '-c', 'user.email=h@example.com', 'commit', '-qm', 'feature')
    const diff = await call('agent_diff', {agent: 'helper'})
    expect(diff.isError, JSON.stringify(diff.body)).toBe(false)
    expect(JSON.stringify(diff.body)).toContain('feature.txt')
    expect(JSON.stringify(diff.body)).toContain('by the helper')

    const messaged = await call('agent_message', {agent: 'helper', message: 'echo hello'})
    expect(messaged.isError, JSON.stringify(messaged.body)).toBe(false)

    const merged = await call('agent_merge', {agent: 'helper'})
    expect(merged.isError, JSON.stringify(merged.body)).toBe(false)
    expect(merged.body).toMatchObject({merged: true, baseRef: 'svc/lead', branch: 'svc/helper'})
    expect(git(lead.workspace.path, 'rev-parse', 'HEAD')).toBe(merged.body.commit)
    expect(readFileSync(join(lead.workspace.path, 'feature.txt'), 'utf8')).toBe('by the helper\n')

    // Waiting: the child stopped (by a person) is `done`.
    expect((await hub.request('POST', `/api/v1/agents/${helper.id}/stop`, {body: {}})).status).toBe(200)
    const waited = await call('agent_wait', {agent: 'helper', for: 'done'})
    expect(waited.isError, JSON.stringify(waited.body)).toBe(false)
    expect(waited.body.agent).toMatchObject({id: helper.id, phase: 'stopped'})
  }, 180_000)

  it("a refusal is a tool error carrying the Hub's code and message", async () => {
    const unknown = await call('agent_get', {agent: 'nobody-here'})
    expect(unknown.isError).toBe(true)
    expect(unknown.body.error).toMatchObject({code: 'not_found'})
    // The same envelope the Hub answers the agent over HTTP.
    const http = await hub.request('GET', `/api/v1/projects/${projectId}/agents/nobody-here`, {token})
    expect(http.status).toBe(404)
    expect(unknown.body.error).toMatchObject({code: http.body.error.code, message: http.body.error.message})
    // Its own work is not the agent's to merge (403 forbidden, as over HTTP).
    const own = await call('agent_merge', {agent: 'lead'})
    expect(own).toMatchObject({isError: true, body: {error: {code: 'forbidden'}}})
    // A create the Hub refuses changes nothing.
    const bad = await call('agent_create', {name: 'Bad Name!', harness: 'shell'})
    expect(bad.isError).toBe(true)
    expect(typeof bad.body.error.code).toBe('string')
    expect((await call('agent_list')).body.agents.map((a: {name: string}) => a.name)).not.toContain('Bad Name!')
  })
})
