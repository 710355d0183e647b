import type {HubClient} from './hub-client.js'
import {agentRoute} from './agents-client.js'

import type {AgentDiffDto as AgentDiff, DiffFileDto as DiffFile, MergeResultDto as MergeResult, PushResultDto as PushResult} from '../api/dto.js'

export type {AgentDiff, DiffFile, MergeResult, PushResult}

/** An agent ID uses the top-level route whatever the current project; a name is looked up in the project. */
const pathOf = (projectId: string, agent: string) => agentRoute(agent, projectId)

/** Reviewing and landing an agent's work (diff, merge, push). */
export const reviewApi = (c: HubClient) => ({
  diff: (projectId: string, agent: string, q: {stat?: boolean; maxBytes?: number} = {}, timeoutMs?: number) => {
    const qs = new URLSearchParams()
    if (q.stat) qs.set('stat', 'true')
    if (q.maxBytes) qs.set('maxBytes', String(q.maxBytes))
    return c.call<AgentDiff>('GET', `${pathOf(projectId, agent)}/diff${qs.size ? `?${qs}` : ''}`, undefined, timeoutMs ? {timeoutMs} : {})
  },
  merge: (projectId: string, agent: string, body: {strategy?: 'merge' | 'squash'; message?: string}) => c.call<MergeResult>('POST', `${pathOf(projectId, agent)}/merge`, body, {timeoutMs: 240_000}),
  push: (projectId: string, agent: string) => c.call<PushResult>('POST', `${pathOf(projectId, agent)}/push`, {}, {timeoutMs: 300_000}),
})
