import type {ApprovalDecisionInput, ApprovalDto, ApprovalState} from '../api/approval.js'
import {agentRoute} from './agents-client.js'
import type {HubClient} from './hub-client.js'

export type Approval = ApprovalDto

const q = (state?: ApprovalState) => (state ? `?state=${state}` : '')

/** Typed calls for approvals (CONTRACT "Approvals"). */
export const approvalsApi = (c: HubClient) => ({
  /** What the caller may decide. */
  list: (state?: ApprovalState) => c.call<{approvals: Approval[]}>('GET', `/api/v1/approvals${q(state)}`),
  /** One agent's, oldest first. */
  forAgent: (projectId: string, agent: string, state?: ApprovalState) => c.call<{approvals: Approval[]}>('GET', `${agentRoute(agent, projectId)}/approvals${q(state)}`),
  decide: (id: string, body: ApprovalDecisionInput) => c.call<{approval: Approval}>('POST', `/api/v1/approvals/${encodeURIComponent(id)}/decision`, body),
})
