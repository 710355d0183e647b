import type {Agent} from '../client/agents-client.js'
import type {HubClient} from '../client/hub-client.js'
import {reviewApi} from '../client/review-client.js'
import {totals} from './diff-render.js'

/** At most this many diffstats per listing, this many at once, each answered within this time. */
const MAX_AGENTS = 50
const CONCURRENCY = 8
// SVC_DIFFSTAT_TIMEOUT_MS changes the limit (a loaded test machine needs more).
const TIMEOUT_MS = Number(process.env.SVC_DIFFSTAT_TIMEOUT_MS) || 2000

/**
 * `+added -deleted` of each listed agent that has a workspace, for `svc agent list`. A diffstat is
 * git work on the agent's broker, so the list stays fast by asking only for agents with a
 * workspace (the first 50), 8 at a time, each with a 2 s limit; an agent whose broker is away or
 * slow shows no count rather than holding the list up. Keyed by agent ID.
 */
export async function diffstats(client: HubClient, agents: Agent[]): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  const todo = agents.filter((a) => a.workspace).slice(0, MAX_AGENTS)
  const api = reviewApi(client)
  const worker = async () => {
    for (let a = todo.shift(); a; a = todo.shift()) {
      try {
        const d = await api.diff(a.projectId, a.id, {stat: true}, TIMEOUT_MS)
        const t = totals(d.files)
        out.set(a.id, `+${t.additions} -${t.deletions}`)
      } catch {
        // No count: the broker is away or slow, or the agent's repository is gone.
      }
    }
  }
  await Promise.all(Array.from({length: CONCURRENCY}, worker))
  return out
}
