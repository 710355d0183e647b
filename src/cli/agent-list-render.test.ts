import {describe, expect, it} from 'vitest'
import type {Agent} from '../client/agents-client.js'
import {agentListTable, listFooter, needsYouFirst, shortIds, taskLine} from './agent-list-render.js'

const agent = (o: Partial<Agent> & {name: string; id: string}): Agent =>
  ({phase: 'running', activity: 'idle', detail: '', harnessConfig: 'shell', task: null, workspace: null, usage: null, ...o}) as Agent

describe('svc agent list: the table', () => {
  it('agents that need you come first: waiting for input, then failed, then the rest in the Hub\'s order', () => {
    const list = [
      agent({name: 'a', id: '1'}),
      agent({name: 'b', id: '2', phase: 'error', activity: null}),
      agent({name: 'c', id: '3', activity: 'waiting_for_input'}),
      agent({name: 'd', id: '4', phase: 'stopped', activity: null}),
      agent({name: 'e', id: '5', activity: 'waiting_for_input'}),
    ]
    expect(needsYouFirst(list).map((a) => a.name)).toEqual(['c', 'e', 'b', 'a', 'd'])
  })

  it('short IDs: the shortest unique start of 8 or more characters, never ending at a dash', () => {
    const ids = ['1234abcd-0000-4000-8000-000000000001', '1234abce-0000-4000-8000-000000000002', '9999ffff-1111-4000-8000-000000000003', '9999ffff-2222-4000-8000-000000000004']
    const s = shortIds(ids)
    expect(ids.map((i) => s.get(i))).toEqual(['1234abcd', '1234abce', '9999ffff-1', '9999ffff-2'])
    for (const [id, p] of s) expect(ids.filter((x) => x.startsWith(p))).toEqual([id])
    expect(shortIds(['abcdef01-0000-4000-8000-000000000001']).get('abcdef01-0000-4000-8000-000000000001')).toBe('abcdef01')
  })

  it('TASK is the first line; on a terminal a line is cut inside TASK to the width, never before it; not cut without one or with --wide', () => {
    expect(taskLine(agent({name: 'x', id: '1', task: '\n  fix   the\tfailing test\nand more'}))).toBe('fix the failing test')
    const list = [agent({name: 'fixer', id: 'aaaaaaaa-0000-4000-8000-000000000001', task: 'fix the failing test in src/app.ts and then run the whole suite again'})]
    const whole = agentListTable(list, {width: null}).split('\n')
    expect(whole[1]).toMatch(/aaaaaaaa  fix the failing test in src\/app\.ts and then run the whole suite again$/)
    const cut = agentListTable(list, {width: 70}).split('\n')
    expect(cut[1]).toHaveLength(70)
    expect(cut[1].endsWith('…')).toBe(true)
    expect(cut[1]).toContain('aaaaaaaa  fix the')
    // Narrower than the columns before TASK: still 10 characters of the task.
    const narrow = agentListTable(list, {width: 20}).split('\n')
    expect(narrow[1]).toMatch(/aaaaaaaa  fix the f…$/)
    expect(agentListTable(list, {width: 70, wide: true})).toContain('aaaaaaaa-0000-4000-8000-000000000001  fix the failing test in src/app.ts and then run the whole suite again')
  })

  it('a footer counts the agents and totals their cost; LANDED shows merged and pushed work', () => {
    const usage = (costUsd: number) => ({inputTokens: 1, outputTokens: 1, modelCalls: 1, costUsd})
    const ws = {path: '/w', branch: 'svc/x', baseRef: 'main', baseCommit: 'abc'}
    const list = [
      agent({name: 'x', id: 'aaaaaaaa-1', usage: usage(1.25), workspace: ws, mergedAt: '2026-11-27T00:00:00.000Z', pushedAt: null}),
      agent({name: 'y', id: 'bbbbbbbb-1', usage: usage(0.02), workspace: {...ws, branch: 'svc/y'}, mergedAt: '2026-11-27T00:00:00.000Z', pushedAt: '2026-11-27T00:00:00.000Z'}),
      agent({name: 'z', id: 'cccccccc-1', task: 'z'}),
    ]
    expect(agentListTable(list)).toBe(
      [
        'NAME  STATE         DETAIL  HARNESS  COST     BRANCH  CHANGES  LANDED          ID        TASK',
        'x     running/idle  -       shell    $1.25    svc/x   -        merged          aaaaaaaa  -',
        'y     running/idle  -       shell    $0.0200  svc/y   -        merged, pushed  bbbbbbbb  -',
        'z     running/idle  -       shell    -        -       -        -               cccccccc  z',
        '3 agents, total cost $1.27',
      ].join('\n'),
    )
    expect(listFooter([list[2]])).toBe('1 agent, total cost $0.00')
    expect(agentListTable([])).toBe('No agents.')
  })
})
