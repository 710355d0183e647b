import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {createUser} from '../helpers/users.js'

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, {cwd, encoding: 'utf8'}).trim()

/**
 * Teams, parent and child (CONTRACT.md "Teams"): an agent created with an agent's credential is
 * its child, on a branch made from the parent's branch head with the parent's branch as its
 * base; a person names a parent with `parentId`; a child's role never exceeds its parent's; the
 * tree route shows the lineage with subtree totals. Real shell agents on the co-located broker.
 */
describeEachDialect('teams: parent and child, and the tree', (dialect) => {
  let hub: LiveHub
  let checkout: string
  let projectId: string
  let lead: any

  beforeAll(async () => {
    hub = await startLiveHub(dialect)
    checkout = mkdtempSync(join(tmpdir(), 'svc-teams-'))
    git(checkout, 'init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# team\n')
    git(checkout, 'add', '.')
    git(checkout, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first')
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'teams', localPath: checkout}})).body.project.id
    lead = (await hub.request('POST', '/api/v1/agents', {body: {name: 'lead', projectId, harnessConfig: 'shell', role: 'full'}})).body.agent
    expect(lead).toMatchObject({phase: 'running', parent: null})
  }, 120_000)
  afterAll(async () => {
    await hub?.dispose()
    if (checkout) rmSync(checkout, {recursive: true, force: true})
  })
  const tokenOf = async (id: string) => (await hub.services.agentTokens.mint((await hub.store.agents.get(id))!)).token

  it("an agent's new agent is its child, on a branch from the parent's branch head", async () => {
    writeFileSync(join(lead.workspace.path, 'plan.md'), 'the plan\n')
    git(lead.workspace.path, 'add', 'plan.md')
    git(lead.workspace.path, '-c', 'user.name=lead', '-c', 'user.email=l@example.com', 'commit', '-qm', 'plan')
    const tip = git(lead.workspace.path, 'rev-parse', 'HEAD')
    const r = await hub.request('POST', '/api/v1/agents', {token: await tokenOf(lead.id), body: {name: 'helper', projectId, harnessConfig: 'shell'}})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    expect(r.body.agent).toMatchObject({phase: 'running', parent: {id: lead.id, name: 'lead'}, brokerId: lead.brokerId})
    expect(r.body.agent.workspace).toMatchObject({branch: 'svc/helper', baseRef: 'svc/lead', baseCommit: tip})
    expect(git(r.body.agent.workspace.path, 'rev-parse', 'HEAD')).toBe(tip)
    expect(readFileSync(join(r.body.agent.workspace.path, 'plan.md'), 'utf8')).toBe('the plan\n')
    // The record shows the parent on every read.
    expect((await hub.request('GET', `/api/v1/agents/${r.body.agent.id}`)).body.agent.parent).toEqual({id: lead.id, name: 'lead'})
    // An agent cannot put its new agent under another agent.
    const other = await hub.request('POST', '/api/v1/agents', {token: await tokenOf(r.body.agent.id), body: {name: 'sneaky', projectId, harnessConfig: 'shell', parentId: lead.id}})
    expect(other.status).toBe(403)
    expect((await hub.request('GET', `/api/v1/agents?projectId=${projectId}`)).body.agents.map((x: {name: string}) => x.name)).not.toContain('sneaky')
  }, 120_000)

  it("a person names a parent; a child's role never exceeds its parent's", async () => {
    const aide = await hub.request('POST', '/api/v1/agents', {body: {name: 'aide', projectId, harnessConfig: 'shell', parentId: 'lead'}})
    expect(aide.status, JSON.stringify(aide.body)).toBe(201)
    expect(aide.body.agent.parent).toEqual({id: lead.id, name: 'lead'})
    expect(aide.body.agent.workspace.baseRef).toBe('svc/lead')
    const ro = (await hub.request('POST', '/api/v1/agents', {body: {name: 'ro-lead', projectId, harnessConfig: 'shell', role: 'readonly'}})).body.agent
    const over = await hub.request('POST', '/api/v1/agents', {body: {name: 'over', projectId, harnessConfig: 'shell', role: 'full', parentId: ro.id}})
    expect(over.status).toBe(403)
    expect(over.body.error.message).toMatch(/may not exceed its parent's/)
    const unknown = await hub.request('POST', '/api/v1/agents', {body: {name: 'lost', projectId, harnessConfig: 'shell', parentId: 'nobody'}})
    expect(unknown.status).toBe(400)
    expect(unknown.body.error.code).toBe('validation_error')
    const names = (await hub.request('GET', `/api/v1/agents?projectId=${projectId}`)).body.agents.map((x: {name: string}) => x.name)
    expect(names).not.toContain('over')
    expect(names).not.toContain('lost')
  }, 120_000)

  it('the tree route: who spawned whom, and the totals of the subtree', async () => {
    const helper = (await hub.request('GET', `/api/v1/projects/${projectId}/agents/helper`)).body.agent
    const report = await hub.request('POST', `/api/v1/agents/${helper.id}/status`, {token: await tokenOf(helper.id), body: {activity: 'idle', turnEnded: true, usage: {sessionId: 's1', inputTokens: 10, outputTokens: 5, modelCalls: 2, costUsd: 0.25}}})
    expect(report.status).toBe(200)
    await waitFor(async () => (await hub.request('GET', `/api/v1/agents/${lead.id}/tree`)).body.totals?.modelCalls === 2, 10_000, 'the usage in the totals')
    for (const url of [`/api/v1/agents/${lead.id}/tree`, `/api/v1/projects/${projectId}/agents/lead/tree`]) {
      const t = await hub.request('GET', url)
      expect(t.status, url).toBe(200)
      expect(t.body.tree.agent).toMatchObject({id: lead.id, name: 'lead', parent: null})
      expect(t.body.tree.children.map((c: any) => c.agent.name)).toEqual(['helper', 'aide'])
      expect(t.body.tree.children.every((c: any) => c.children.length === 0)).toBe(true)
      expect(t.body.totals).toEqual({agents: 3, costUsd: 0.25, modelCalls: 2, turns: 1})
    }
    const leaf = await hub.request('GET', `/api/v1/agents/${helper.id}/tree`)
    expect(leaf.body).toMatchObject({tree: {agent: {name: 'helper'}, children: []}, totals: {agents: 1}})
    const stranger = await createUser(hub)
    expect((await hub.request('GET', `/api/v1/agents/${lead.id}/tree`, {token: stranger.token})).status).toBe(404)
    // A deleted child leaves the tree.
    expect((await hub.request('DELETE', `/api/v1/projects/${projectId}/agents/aide`)).status).toBe(200)
    expect((await hub.request('GET', `/api/v1/agents/${lead.id}/tree`)).body.tree.children.map((c: any) => c.agent.name)).toEqual(['helper'])
  }, 120_000)

  it("a parent merges its child's work into its own branch and work tree; nobody else's, never its own; a person then lands the parent", async () => {
    const helper = (await hub.request('GET', `/api/v1/projects/${projectId}/agents/helper`)).body.agent
    const ws = helper.workspace.path
    writeFileSync(join(ws, 'feature.txt'), 'by the helper\n')
    git(ws, 'add', 'feature.txt')
    git(ws, '-c', 'user.name=helper', '-c', 'user.email=h@example.com', 'commit', '-qm', 'feature')
    writeFileSync(join(ws, 'notes.txt'), 'left uncommitted\n')
    const leadToken = await tokenOf(lead.id)
    // Its own work, and another agent's child, are not its to merge.
    expect((await hub.request('POST', `/api/v1/agents/${lead.id}/merge`, {token: leadToken, body: {}})).status).toBe(403)
    expect((await hub.request('POST', `/api/v1/agents/${lead.id}/merge`, {token: await tokenOf(helper.id), body: {}})).status).toBe(403)
    // A change of the parent's own, uncommitted, to a file the merge writes: refused, nothing moves.
    const before = git(lead.workspace.path, 'rev-parse', 'HEAD')
    writeFileSync(join(lead.workspace.path, 'feature.txt'), 'the lead was here\n')
    const dirty = await hub.request('POST', `/api/v1/agents/${helper.id}/merge`, {token: leadToken, body: {}})
    expect(dirty.status, JSON.stringify(dirty.body)).toBe(409)
    expect(dirty.body.error).toMatchObject({code: 'checkout_dirty', details: {files: ['feature.txt']}})
    expect(git(lead.workspace.path, 'rev-parse', 'HEAD')).toBe(before)
    rmSync(join(lead.workspace.path, 'feature.txt'))

    // The parent's own hooks run with its own git, in its sandbox (its private /tmp), never on the host.
    const leadHome = join(lead.workspace.path, '..', '..', 'homes', lead.id)
    const marker = join(tmpdir(), `svc-teams-hook-${lead.id}`)
    const hooks = join(lead.workspace.path, '..', '..', 'repos', `${lead.id}.git`, 'hooks')
    mkdirSync(hooks, {recursive: true})
    writeFileSync(join(hooks, 'post-merge'), `#!/bin/sh\necho ran > "$HOME/hook-ran"\ntouch ${marker}\n`, {mode: 0o755})
    const merged = await hub.request('POST', `/api/v1/agents/${helper.id}/merge`, {token: leadToken, body: {}})
    expect(merged.status, JSON.stringify(merged.body)).toBe(200)
    expect(merged.body).toMatchObject({merged: true, baseRef: 'svc/lead', branch: 'svc/helper'})
    expect(merged.body.files.sort()).toEqual(['feature.txt', 'notes.txt'])
    // In the parent's repository and work tree, done by the parent's own git in its sandbox.
    expect(git(lead.workspace.path, 'rev-parse', 'HEAD')).toBe(merged.body.commit)
    expect(git(lead.workspace.path, 'rev-parse', 'HEAD^1')).toBe(before)
    expect(readFileSync(join(lead.workspace.path, 'feature.txt'), 'utf8')).toBe('by the helper\n')
    expect(readFileSync(join(lead.workspace.path, 'notes.txt'), 'utf8')).toBe('left uncommitted\n')
    expect(git(lead.workspace.path, 'status', '--porcelain')).toBe('')
    expect(readFileSync(join(leadHome, 'hook-ran'), 'utf8')).toBe('ran\n')
    expect(existsSync(marker)).toBe(false)
    // No bundle is left in the parent's HOME.
    expect(readdirSync(leadHome).filter((f) => f.endsWith('.bundle'))).toEqual([])
    // A person lands the lead, with its child's work, on the checkout.
    const landed = await hub.request('POST', `/api/v1/agents/${lead.id}/merge`, {body: {}})
    expect(landed.status, JSON.stringify(landed.body)).toBe(200)
    expect(readFileSync(join(checkout, 'feature.txt'), 'utf8')).toBe('by the helper\n')
    expect(readFileSync(join(checkout, 'plan.md'), 'utf8')).toBe('the plan\n')
  }, 180_000)
})

