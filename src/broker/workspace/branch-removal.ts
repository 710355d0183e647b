/**
 * Removing an agent's workspace together with its branch (`svc agent delete --branch`), once the
 * branch is merged. "Merged" means the base branch of the checkout already has every change on
 * it, as `nothing_to_merge` does for a merge: the tip is an ancestor of the base, or merging it
 * would leave the base's tree as it is (work landed by a squash). A branch that is not merged is
 * kept exactly as a plain delete keeps it, and the answer says why: deleting never loses a commit.
 */
import {existsSync} from 'node:fs'
import type {AgentWorkspace, DeletedBranchDto} from '../../api/dto.js'
import {readAgentRef, readRecord, type AgentRepoPaths} from './agent-repo.js'
import {gitRaw} from './git.js'
import {hostGitRaw, prepareHostRead} from './host-git.js'
import {removeWorkspace} from './repository.js'

const out = (r: {stdout: Buffer}) => r.stdout.toString('utf8').trim()

/** Whether `tip` adds nothing to `base`, by a git runner over a repository that has both. */
async function mergedInto(run: (args: string[]) => Promise<{code: number; stdout: Buffer}>, tip: string, base: string): Promise<boolean> {
  if ((await run(['merge-base', '--is-ancestor', tip, base])).code === 0) return true
  const mt = await run(['merge-tree', '--write-tree', '--no-messages', base, tip])
  if (mt.code !== 0) return false
  return out(mt).split('\n')[0] === out(await run(['rev-parse', `${base}^{tree}`]))
}

/**
 * Is the agent's branch merged into the checkout's base? Read through svc's repository (hardened,
 * it sees the agent's objects and the checkout's); the base's tip from the checkout, the person's.
 */
async function agentBranchMerged(paths: AgentRepoPaths, ws: AgentWorkspace, checkout: string): Promise<{merged: boolean; reason?: string}> {
  const rec = readRecord(paths)
  if (!rec) return {merged: false, reason: "the agent's repository is not one svc can read"}
  const base = ws.baseRef.replace(/^refs\/heads\//, '')
  const baseTip = out(await gitRaw(['rev-parse', '--verify', '-q', `refs/heads/${base}^{commit}`], {cwd: checkout}))
  if (!baseTip) return {merged: false, reason: `the checkout has no branch ${base} to be merged into`}
  await prepareHostRead(paths, rec)
  const tip = readAgentRef(paths, `refs/heads/${ws.branch}`)
  if (!tip) return {merged: true}
  const run = (args: string[]) => hostGitRaw(paths, args, {timeoutMs: 120_000})
  return (await mergedInto(run, tip, baseTip)) ? {merged: true} : {merged: false, reason: `it is not merged into ${base}; merge it (svc agent merge) or delete the branch by hand (git branch -D ${ws.branch})`}
}

/**
 * The checkout's own `svc/<agent>` (a merge or a push put it there) goes too when it is merged
 * and no work tree of the checkout has it checked out; it is deleted only at the commit checked.
 */
async function deleteCheckoutBranch(checkout: string, ws: AgentWorkspace): Promise<DeletedBranchDto> {
  const ref = `refs/heads/${ws.branch}`
  const base = ws.baseRef.replace(/^refs\/heads\//, '')
  const tip = out(await gitRaw(['rev-parse', '--verify', '-q', `${ref}^{commit}`], {cwd: checkout}))
  if (!tip) return {name: ws.branch, deleted: true}
  const run = (args: string[]) => gitRaw(args, {cwd: checkout, timeoutMs: 120_000})
  if (!(await mergedInto(run, tip, `refs/heads/${base}`))) return {name: ws.branch, deleted: false, reason: `the checkout's ${ws.branch} holds commits ${base} does not have`}
  const worktrees = out(await run(['worktree', 'list', '--porcelain']))
  if (worktrees.split('\n').includes(`branch ${ref}`)) return {name: ws.branch, deleted: false, reason: `${ws.branch} is checked out in the checkout`}
  const r = await run(['update-ref', '-d', ref, tip])
  return r.code === 0 ? {name: ws.branch, deleted: true} : {name: ws.branch, deleted: false, reason: `${ws.branch} moved meanwhile`}
}

/**
 * Removes the workspace (repository.ts `removeWorkspace`) and, when the agent's branch is merged
 * into its base in the checkout, the branch too: it is then not fetched into the checkout, and
 * the checkout's own copy goes. Otherwise the branch is kept as a plain delete keeps it. The
 * checkout is the one recorded when the agent was made, never `hubCheckout` (only for the above).
 */
export async function removeWorkspaceAndBranch(paths: AgentRepoPaths, ws: AgentWorkspace, hubCheckout: string | null = null): Promise<{kept: string | null; branch: DeletedBranchDto}> {
  const checkout = readRecord(paths)?.checkout ?? null
  if (!checkout || !existsSync(checkout)) {
    // A workspace of an older svc (no record) has its registration pruned from the checkout the Hub names.
    const kept = await removeWorkspace(paths, ws, {checkout: hubCheckout})
    return {kept, branch: {name: ws.branch, deleted: false, reason: "the agent has no project checkout on its broker: a clone's branch lives in its remote"}}
  }
  let verdict: {merged: boolean; reason?: string}
  try {
    verdict = await agentBranchMerged(paths, ws, checkout)
  } catch (err) {
    verdict = {merged: false, reason: `whether it is merged could not be told: ${(err as Error).message}`}
  }
  if (!verdict.merged) return {kept: await removeWorkspace(paths, ws, {checkout}), branch: {name: ws.branch, deleted: false, reason: verdict.reason}}
  await removeWorkspace(paths, ws, {removeBranch: true, checkout})
  return {kept: null, branch: await deleteCheckoutBranch(checkout, ws)}
}
