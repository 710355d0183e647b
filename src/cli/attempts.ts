/** Teams, attempts, as the CLI reads them: `svc agent compare` and `svc agent pick` (docs/teams.md, "Attempts"). */
import {AppError} from '../api/app-error.js'
import type {AgentDiffDto, AgentDto} from '../api/dto.js'
import type {PickResult} from '../domain/teams/pick.js'
import type {HubClient} from '../client/hub-client.js'
import {agentRoute} from '../client/agents-client.js'

const enc = encodeURIComponent

export interface AttemptRow {
  name: string
  id: string
  harness: string
  state: string
  check: AgentDto['check']
  turns: number
  costUsd: number
  /** Seconds from creation to now while it runs, to its last change once stopped. */
  durationSeconds: number
  filesChanged: number
  added: number
  deleted: number
  /** Why the diffstat is missing (its broker offline, no workspace), else absent. */
  diffError?: string
}

/** The live attempts of group `name` in the project, in order (`GET /agents?group=`). */
export async function attemptsOf(client: HubClient, projectId: string, group: string): Promise<AgentDto[]> {
  const {agents} = await client.call<{agents: AgentDto[]}>('GET', `/api/v1/agents?projectId=${enc(projectId)}&group=${enc(group)}`)
  return agents
}

const live = (a: AgentDto) => a.phase === 'running' || a.phase === 'provisioning'

/** One row per attempt: its record plus its diffstat (`GET .../diff?stat=true`). */
export async function compareAttempts(client: HubClient, projectId: string, group: string, now = Date.now()): Promise<AttemptRow[]> {
  const agents = await attemptsOf(client, projectId, group)
  if (agents.length === 0) throw new AppError('not_found', `no attempts in group ${group} (create them with svc agent create ${group} --attempts N)`)
  return Promise.all(
    agents.map(async (a) => {
      const end = live(a) ? now : Date.parse(a.updatedAt)
      const row: AttemptRow = {name: a.name, id: a.id, harness: a.harnessConfig, state: live(a) ? (a.activity ?? a.phase) : a.phase, check: a.check, turns: a.turns, costUsd: a.usage?.costUsd ?? 0, durationSeconds: Math.max(0, Math.round((end - Date.parse(a.createdAt)) / 1000)), filesChanged: 0, added: 0, deleted: 0}
      try {
        const d = await client.call<AgentDiffDto>('GET', `${agentRoute(a.id, projectId)}/diff?stat=true`)
        row.filesChanged = d.files.length
        row.added = d.files.reduce((n, f) => n + f.additions, 0)
        row.deleted = d.files.reduce((n, f) => n + f.deletions, 0)
      } catch (err) {
        row.diffError = (err as Error).message
      }
      return row
    }),
  )
}

const duration = (s: number) => (s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`)
const checkText = (c: AgentDto['check']) => (c ? (c.exitCode === null || c.status === 'running' ? c.status : `${c.status} (${c.exitCode})`) : '-')

/** A table, one attempt a line. */
export function renderAttempts(rows: AttemptRow[]): string {
  const table = [['ATTEMPT', 'HARNESS', 'STATE', 'CHECK', 'TURNS', 'COST', 'TIME', 'FILES', '+/-']]
  for (const r of rows) table.push([r.name, r.harness, r.state, checkText(r.check), String(r.turns), `$${r.costUsd.toFixed(2)}`, duration(r.durationSeconds), r.diffError ? '?' : String(r.filesChanged), r.diffError ? '?' : `+${r.added} -${r.deleted}`])
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)))
  return table.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n')
}

export type {PickResult}

/** Keeps one attempt through the Hub's `POST .../pick` (src/domain/teams/pick.ts: merge it, delete the others). */
export async function pickAttempt(client: HubClient, projectId: string, ref: string, opts: {squash?: boolean} = {}): Promise<PickResult> {
  return client.call<PickResult>('POST', `${agentRoute(ref, projectId)}/pick`, {strategy: opts.squash ? 'squash' : 'merge'}, {timeoutMs: 240_000})
}
