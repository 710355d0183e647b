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
import {mergeChild} from './workspace/merge-child.js'
import type {RunResult} from './runtimes/run-command.js'
import {pushWorkspace} from './workspace/push.js'
import {WorkspaceRefusal} from './workspace/refusal.js'

export const WORKSPACE_METHODS = ['agent.diff', 'agent.merge', 'agent.push'] as const

/** What the broker lends review requests: a command run inside an agent's own sandbox or container. */
export interface WorkspaceRequestContext {
  runInAgent(agentId: string, argv: string[]): Promise<RunResult>
  homeOf(agentId: string): string
}

export async function handleWorkspaceRequest(stateDir: string, method: string, params: Record<string, unknown>, ctx?: WorkspaceRequestContext): Promise<unknown> {
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
        // Teams: a parent taking its child's work into its own branch (the Hub checked who asks).
        if (p.into) {
          if (!ctx || typeof p.into.agentId !== 'string' || typeof p.into.workspace?.branch !== 'string') throw Object.assign(new Error('this broker cannot merge into an agent'), {code: 'bad_request'})
          const parentId: string = p.into.agentId
          return await mergeChild({
            parent: {paths: agentRepoPaths(stateDir, parentId), workspace: p.into.workspace, home: ctx.homeOf(parentId), identity: p.committer},
            child: {paths, workspace: p.workspace, identity: p.author, name: p.agent?.name ?? p.agentId},
            strategy: p.strategy === 'squash' ? 'squash' : 'merge',
            message: p.message,
            runInParent: (argv) => ctx.runInAgent(parentId, argv),
          })
        }
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
