/**
 * One command inside an agent's own confinement (Runtime.exec), with the mounts its record fixes
 * (its work tree, repository and HOME; the checkout's objects read-only): what a parent's merge
 * of a child (workspace/merge-child.ts) and an attempt's check (agent-check.ts) run.
 */
import {agentHome} from './agent-launch.js'
import type {Runtime, RuntimeHandle} from './runtime.js'
import type {RunResult} from './runtimes/run-command.js'
import {agentRepoPaths, readRecord, repoMounts} from './workspace/agent-repo.js'

const failure = (code: string, message: string) => Object.assign(new Error(message), {code})

export async function execInAgent(stateDir: string, runtime: Runtime, handle: RuntimeHandle | null, agentId: string, argv: string[]): Promise<RunResult> {
  if (!runtime.exec) throw failure('unsupported_method', `the ${runtime.type} runtime cannot run a command in an agent's confinement`)
  const paths = agentRepoPaths(stateDir, agentId)
  const rec = readRecord(paths)
  if (!rec) throw failure('workspace_missing', `agent ${agentId} has no repository on this broker`)
  const mounts = repoMounts(paths, rec)
  return runtime.exec(handle, {agentId, workdir: paths.workdir, home: agentHome(stateDir, agentId), writablePaths: mounts.writable, readablePaths: mounts.readable}, argv, {timeoutMs: 120_000})
}
