import {execFileSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, {cwd, encoding: 'utf8'}).trim()

/**
 * Teams, budgets along the chain (CONTRACT.md "Teams", docs/teams.md "Budgets"): limits on
 * create, maxChildren and maxDepth refused with 429 budget_exceeded (nothing made, also when two
 * creates race for the last slot), a child's limits lowered to what its parent has left, and a
 * subtree over its holder's maxModelCalls stopped with limits_exceeded naming the limit and the
 * holder. Real shell agents on the co-located broker; usage reported through the status route
 * with each agent's own token, as harness hooks do. The Hub's default_max_turns (50) is the
 * ceiling of a root's limits.
 */
describeEachDialect('teams: budgets along the chain', (dialect) => {
  let hub: LiveHub
  let checkout: string
  let projectId: string

  beforeAll(async () => {
    hub = await startLiveHub(dialect, {files: {'.svc/settings.yaml': 'schema_version: "1"\ndefault_max_turns: 50\n'}})
    checkout = mkdtempSync(join(tmpdir(), 'svc-budgets-'))
    git(checkout, 'init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# budgets\n')
    git(checkout, 'add', '.')
    git(checkout, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first')
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'budgets', localPath: checkout}})).body.project.id
  }, 120_000)
  afterAll(async () => {
    await hub?.dispose()
    if (checkout) rmSync(checkout, {recursive: true, force: true})
  })
  const tokenOf = async (id: string) => (await hub.services.agentTokens.mint((await hub.store.agents.get(id))!)).token
  const create = (body: Record<string, unknown>, token?: string) => hub.request('POST', '/api/v1/agents', {token, body: {projectId, harnessConfig: 'shell', ...body}})
  const names = async () => (await hub.request('GET', `/api/v1/agents?projectId=${projectId}`)).body.agents.map((x: {name: string}) => x.name) as string[]
  const get = async (id: string) => (await hub.request('GET', `/api/v1/agents/${id}`)).body.agent
  const usage = async (id: string, modelCalls: number, costUsd = 0, turnEnded = false) => {
    const r = await hub.request('POST', `/api/v1/agents/${id}/status`, {token: await tokenOf(id), body: {activity: 'idle', turnEnded, usage: {sessionId: 's1', inputTokens: 10, outputTokens: 5, modelCalls, costUsd}}})
    expect(r.status, JSON.stringify(r.body)).toBe(200)
  }

  it('a root shows its limits, the Hub default as their ceiling; bad limits change nothing', async () => {
    const r = await create({name: 'root', limits: {maxTurns: 80, maxModelCalls: 9, maxChildren: 2}})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    expect(r.body.agent.limits).toEqual({maxTurns: 50, maxModelCalls: 9, maxDurationSeconds: null, maxCostUsd: null, maxChildren: 2, maxDepth: null})
    expect((await get(r.body.agent.id)).limits).toEqual(r.body.agent.limits)
    // Without limits: the settings that apply to any agent (here the Hub's default_max_turns).
    expect((await create({name: 'plain'})).body.agent.limits).toMatchObject({maxTurns: 50, maxModelCalls: null, maxChildren: null})
    for (const limits of [{maxTurns: 0}, {maxCostUsd: -1}, {maxDepth: 1.5}, {maxWidgets: 1}, 'ten']) {
      const bad = await create({name: 'bad', limits})
      expect(bad.status, JSON.stringify(limits)).toBe(400)
      expect(bad.body.error.code).toBe('validation_error')
    }
    expect(await names()).not.toContain('bad')
  }, 120_000)

  it('maxChildren and maxDepth: a create past them answers 429 budget_exceeded and makes nothing', async () => {
    const boss = (await create({name: 'boss', limits: {maxChildren: 1, maxDepth: 1}})).body.agent
    const kid = await create({name: 'kid', parentId: 'boss'})
    expect(kid.status, JSON.stringify(kid.body)).toBe(201)
    expect(kid.body.agent.limits).toMatchObject({maxChildren: 1, maxDepth: 0})
    // A second child of boss (a person's --parent, then boss's own credential).
    for (const token of [undefined, await tokenOf(boss.id)]) {
      const second = await create({name: 'kid2', parentId: token ? undefined : 'boss'}, token)
      expect(second.status, JSON.stringify(second.body)).toBe(429)
      expect(second.body.error.code).toBe('budget_exceeded')
      expect(second.body.error.details).toMatchObject({limit: 'maxChildren', agent: {id: boss.id, name: 'boss'}, value: 1})
    }
    // A grandchild of boss: past boss's maxDepth, whoever asks.
    const grand = await create({name: 'grandkid'}, await tokenOf(kid.body.agent.id))
    expect(grand.status, JSON.stringify(grand.body)).toBe(429)
    expect(grand.body.error.details).toMatchObject({limit: 'maxDepth', agent: {id: boss.id, name: 'boss'}, value: 1})
    // Deleted children still count: the slot does not come back.
    expect((await hub.request('DELETE', `/api/v1/agents/${kid.body.agent.id}`)).status).toBe(200)
    expect((await create({name: 'kid3', parentId: 'boss'})).status).toBe(429)
    const now = await names()
    for (const n of ['kid2', 'grandkid', 'kid3']) expect(now).not.toContain(n)
    expect((await hub.request('GET', `/api/v1/agents/${boss.id}/tree`)).body.totals.agents).toBe(1)
  }, 120_000)

  it("two creates racing for a parent's last child slot: one is made, the other answers 429", async () => {
    const pair = (await create({name: 'pair', limits: {maxChildren: 1}})).body.agent
    const token = await tokenOf(pair.id)
    const [a, b] = await Promise.all([create({name: 'racer-a'}, token), create({name: 'racer-b'}, token)])
    expect([a.status, b.status].sort(), JSON.stringify([a.body, b.body])).toEqual([201, 429])
    expect([a, b].find((r) => r.status === 429)!.body.error.code).toBe('budget_exceeded')
    const children = (await hub.request('GET', `/api/v1/agents/${pair.id}/tree`)).body.tree.children
    expect(children).toHaveLength(1)
  }, 120_000)

  it("a child's limits are lowered to what its parent has left", async () => {
    const lead = (await create({name: 'lead', limits: {maxTurns: 5, maxModelCalls: 10, maxCostUsd: 1, maxDurationSeconds: 3600, maxDepth: 3}})).body.agent
    await usage(lead.id, 3, 0.25, true)
    await waitFor(async () => (await get(lead.id)).turns === 1, 10_000, 'the turn counted')
    const r = await create({name: 'lead-child', limits: {maxModelCalls: 20, maxDepth: 5}}, await tokenOf(lead.id))
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    const l = r.body.agent.limits
    expect(l).toMatchObject({maxTurns: 4, maxModelCalls: 7, maxCostUsd: 0.75, maxChildren: null, maxDepth: 2})
    expect(l.maxDurationSeconds).toBeGreaterThan(3000)
    expect(l.maxDurationSeconds).toBeLessThanOrEqual(3600)
    // The agent's own max_* (what the broker and the single-agent checks read) are the lowered ones.
    expect(r.body.agent.appliedSettings.defaultMaxModelCalls).toEqual({value: 7, from: 'limits'})
    expect(r.body.agent.appliedSettings.defaultMaxTurns).toEqual({value: 4, from: 'limits'})
    expect((await get(r.body.agent.id)).limits).toEqual(l)
    // Still running: nothing is over yet.
    expect((await get(lead.id)).phase).toBe('running')
  }, 120_000)

  it("a child's model calls that pass its parent's maxModelCalls stop the parent's whole subtree", async () => {
    const chief = (await create({name: 'chief', limits: {maxModelCalls: 10}})).body.agent
    const chiefToken = await tokenOf(chief.id)
    const workerA = (await create({name: 'worker-a'}, chiefToken)).body.agent
    const workerB = (await create({name: 'worker-b'}, chiefToken)).body.agent
    const grandchild = (await create({name: 'worker-a-1'}, await tokenOf(workerA.id))).body.agent
    const bystander = (await create({name: 'bystander', limits: {maxModelCalls: 10}})).body.agent
    expect(workerA.limits.maxModelCalls).toBe(10)
    // Control: under the limit nothing stops (chief 6 of 10, bystander 9 of its own 10).
    await usage(chief.id, 6)
    await usage(bystander.id, 9)
    await waitFor(async () => (await hub.request('GET', `/api/v1/agents/${chief.id}/tree`)).body.totals.modelCalls === 6, 10_000, 'the usage counted')
    // worker-a's 5 are within its own 10, but chief's subtree now has 11 of 10.
    await usage(workerA.id, 5)
    for (const a of [chief, workerA, workerB, grandchild]) {
      const got = await waitFor(async () => {
        const x = await get(a.id)
        return x.phase === 'stopped' ? x : null
      }, 30_000, `${a.name} stopped`)
      expect(got.activity, a.name).toBe('limits_exceeded')
      expect(got.detail, a.name).toMatch(/max_model_calls \(10\) exceeded: 11 model calls by chief and its 3 descendants \(limits\.maxModelCalls of agent chief\)/)
      // Its session is gone from the runtime.
      expect(hub.tmux('has-session', '-t', `=svc-${a.id}`).code, a.name).not.toBe(0)
    }
    expect(await get(bystander.id)).toMatchObject({phase: 'running'})
  }, 120_000)

  it("cost and turns count the children's too: the holder's subtree stops at its maxCostUsd and maxTurns", async () => {
    const stoppedWith = async (id: string, detail: RegExp) => {
      const got = await waitFor(async () => {
        const x = await get(id)
        return x.phase === 'stopped' ? x : null
      }, 30_000, `${id} stopped`)
      expect(got.activity).toBe('limits_exceeded')
      expect(got.detail).toMatch(detail)
    }
    const purse = (await create({name: 'purse', limits: {maxCostUsd: 1}})).body.agent
    const spender = (await create({name: 'spender'}, await tokenOf(purse.id))).body.agent
    expect(spender.limits.maxCostUsd).toBe(1)
    await usage(purse.id, 1, 0.4)
    expect((await get(purse.id)).phase).toBe('running')
    await usage(spender.id, 1, 0.7)
    for (const a of [purse, spender]) await stoppedWith(a.id, /max_cost_usd \(1\) exceeded: \$1\.1 by purse and its 1 descendant \(limits\.maxCostUsd of agent purse\)/)

    const clock = (await create({name: 'clock', limits: {maxTurns: 2}})).body.agent
    const ticker = (await create({name: 'ticker'}, await tokenOf(clock.id))).body.agent
    await usage(clock.id, 1, 0, true)
    expect((await get(clock.id)).phase).toBe('running')
    await usage(ticker.id, 1, 0, true)
    for (const a of [clock, ticker]) await stoppedWith(a.id, /max_turns \(2\) reached: 2 turns by clock and its 1 descendant \(limits\.maxTurns of agent clock\)/)
  }, 120_000)
})
