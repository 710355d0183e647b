import type {DeletedBranchDto} from '../../api/dto.js'
import type {AgentRecord} from '../../store/repositories/agents.js'

export type {DeletedBranchDto}

/**
 * What a delete with `branch=true` answers about the agent's branch. The broker decides (it
 * deletes the branch only when merged: broker/workspace/branch-removal.ts); when it did not answer
 * (not connected, or the stop failed) the branch is kept, as a plain delete keeps it once the
 * broker removes the workspace, and the answer says so. An agent without a workspace has no branch.
 */
export function deletedBranch(agent: AgentRecord, answered: DeletedBranchDto | undefined, failure?: string): DeletedBranchDto | undefined {
  if (!agent.workspace?.branch) return undefined
  if (answered) return answered
  return {name: agent.workspace.branch, deleted: false, reason: `its broker did not answer${failure ? ` (${failure})` : ''}: the branch is kept, as a plain delete keeps it`}
}
