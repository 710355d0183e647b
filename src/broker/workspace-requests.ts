/**
 * The broker's review requests from the Hub (`agent.diff`, `agent.merge`, `agent.push`): git work
 * on an agent's repository and the project's checkout, which live on this broker's machine. The Hub
 * sends the agent's workspace as it recorded it, so a stopped agent's work can still be reviewed.
 * A refusal (merge conflict, dirty checkout, ...) is answered as `{refused: {code, message,
 * details}}`, not thrown: the tunnel keeps only an error's code and message, and a refusal's
 * details (the conflicting files) are the point of it.
 */
import {agentRepoPaths} from './workspace/agent-repo.js'
import {workspaceDiff} from './workspace/diff.js'
import {mergeWorkspace} from './workspace/merge.js'
import {pushWorkspace} from './workspace/push.js'
import {WorkspaceRefusal} from './workspace/refusal.js'

export const WORKSPACE_METHODS = ['agent.diff', 'agent.merge', 'agent.push'] as const

export async function handleWorkspaceRequest(stateDir: string, method: string, params: Record<string, unknown>): Promise<unknown> {
  const p = params as any
  if (!p.workspace || typeof p.workspace.path !== 'string' || typeof p.workspace.baseCommit !== 'string' || typeof p.agentId !== 'string') throw Object.assign(new Error('the request carries no agent workspace'), {code: 'bad_request'})
  try {
    // The agent's repositories are found from its ID under this broker's state directory, never
    // from a path in the request or a file in the workspace.
    const paths = agentRepoPaths(stateDir, p.agentId)
    switch (method) {
      case 'agent.diff':
        return await workspaceDiff(paths, p.workspace, {maxBytes: p.maxBytes, stat: p.stat === true})
      case 'agent.merge':
        return await mergeWorkspace({paths, workspace: p.workspace, strategy: p.strategy === 'squash' ? 'squash' : 'merge', message: p.message, agent: p.agent, author: p.author, committer: p.committer})
      case 'agent.push':
        return await pushWorkspace({paths, workspace: p.workspace, agent: p.agent, author: p.author, committer: p.committer})
      default:
        throw Object.assign(new Error(`this broker does not support ${method}`), {code: 'unsupported_method'})
    }
  } catch (err) {
    if (err instanceof WorkspaceRefusal) return {refused: {code: err.code, message: err.message, ...(err.details && {details: err.details})}}
    throw err
  }
}
