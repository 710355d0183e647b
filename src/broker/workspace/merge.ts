import {existsSync} from 'node:fs'
import {readAgentRef, recordOrRefuse, type AgentRepoPaths} from './agent-repo.js'
import {fullRef, type WorkspaceRef} from './diff.js'
import {git, GitError, gitRaw} from './git.js'
import {fetchFromAgent, prepareHostRead, workCommit, workMessage, type WorkCommit} from './host-git.js'
import {personIdentity} from './person.js'
import {identityEnv, WorkspaceRefusal, type Identity} from './refusal.js'

export interface MergeRequest {
  paths: AgentRepoPaths
  workspace: WorkspaceRef
  strategy: 'merge' | 'squash'
  message?: string
  /** `task`: the agent's task (its first line is enough), the message of its uncommitted work. */
  agent: {id: string; name: string; task?: string | null}
  /** The agent as author of its work. */
  author: Identity
  /**
   * The user landing it, as the Hub knows them: committer of every commit, author of a merge
   * commit, unless the checkout's git config names them (person.ts), which is preferred.
   */
  committer: Identity
}

import type {MergeResultDto as MergeResult} from '../../api/dto.js'

export type {MergeResult}

const nul = (s: string) => s.split('\0').filter(Boolean)

/**
 * Lands the agent's branch on `baseRef` in the project's checkout (the one recorded when the
 * agent was made). Every check runs before any write, so each refusal leaves both repositories
 * as they were (the checkout at most holds unreferenced objects more):
 *
 * 1. `baseRef` must be what the checkout has checked out (`base_not_checked_out`), and must still
 *    contain the agent's base commit (`base_diverged`: it was reset or rewritten, a person decides).
 * 2. The agent's uncommitted work becomes a commit object (author agent, committer user, its
 *    task as message) in svc's repository, and is fetched into the checkout (git re-hashes every object it takes).
 * 3. `git merge-tree --write-tree` computes the merge without a working tree (`merge_conflict`
 *    with the conflicting paths; `nothing_to_merge` when the base already has it all).
 * 4. Uncommitted changes in the checkout that touch a path the merge writes: `checkout_dirty`.
 *
 * Then it writes: the checkout's `svc/<agent>` moves to the work commit, the checkout's index and files
 * move from the old base tree to the merged tree (`read-tree -m -u`, which keeps unrelated local
 * changes), and `baseRef` moves only if it still points at the tip the merge was computed from.
 * A merge always records a merge commit (never a fast-forward), so the landing is visible.
 */
export async function mergeWorkspace(req: MergeRequest): Promise<MergeResult> {
  const ws = req.workspace
  const rec = recordOrRefuse(req.paths)
  await prepareHostRead(req.paths, rec)
  const checkout = rec.checkout && existsSync(rec.checkout) ? rec.checkout : null
  if (!checkout) throw new WorkspaceRefusal('no_checkout', `the agent's branch ${ws.branch} has no project checkout to merge into on this broker`, {branch: ws.branch})
  const base = fullRef(ws.baseRef)
  const short = (r: string) => r.replace(/^refs\/heads\//, '')
  // The person as their own git knows them: the commits carry the name they commit under.
  req = {...req, committer: await personIdentity(checkout, req.committer)}

  const head = (await gitRaw(['symbolic-ref', '-q', 'HEAD'], {cwd: checkout})).stdout.toString('utf8').trim()
  if (head !== base) {
    throw new WorkspaceRefusal('base_not_checked_out', `the checkout ${checkout} has ${head ? short(head) : 'a detached HEAD'} checked out, not ${short(base)}; check out ${short(base)} there and merge again`, {
      baseRef: short(base),
      checkedOut: head ? short(head) : null,
      checkout,
    })
  }
  const baseTip = await git(['rev-parse', '--verify', `${base}^{commit}`], {cwd: checkout})
  if (baseTip !== ws.baseCommit && (await gitRaw(['merge-base', '--is-ancestor', ws.baseCommit, baseTip], {cwd: checkout})).code !== 0) {
    throw new WorkspaceRefusal('base_diverged', `${short(base)} no longer contains the commit the agent started from (${ws.baseCommit.slice(0, 12)}): it was reset or rewritten; decide by hand how to land ${ws.branch}`, {
      baseRef: short(base),
      baseCommit: ws.baseCommit,
      current: baseTip,
    })
  }

  let work: WorkCommit
  if (existsSync(req.paths.workdir)) work = await workCommit(req.paths, ws.branch, {author: req.author, committer: req.committer, message: workMessage(req.agent)})
  else {
    const tip = readAgentRef(req.paths, fullRef(ws.branch))
    if (!tip) throw new WorkspaceRefusal('workspace_missing', `the agent's repository has no branch ${ws.branch}`, {branch: ws.branch})
    work = {head: tip, commit: tip, created: false}
  }
  // Into a ref of svc's until the merge is decided: a refusal moves no ref the user sees.
  const incoming = `refs/svc/incoming/${req.paths.agentId}`
  const fetched = await fetchFromAgent(req.paths, checkout, work.commit, incoming, {force: true})
  if (fetched.code !== 0) throw new WorkspaceRefusal('workspace_tampered', `the agent's work could not be taken into the checkout (git fetch checks every object): ${fetched.stderr.trim()}`, {branch: ws.branch})
  try {
    return await land(req, checkout, base, baseTip, work)
  } finally {
    await gitRaw(['update-ref', '-d', incoming], {cwd: checkout})
  }
}

async function land(req: MergeRequest, checkout: string, base: string, baseTip: string, work: WorkCommit): Promise<MergeResult> {
  const ws = req.workspace
  const short = (r: string) => r.replace(/^refs\/heads\//, '')
  if ((await gitRaw(['merge-base', '--is-ancestor', work.commit, baseTip], {cwd: checkout})).code === 0) {
    throw new WorkspaceRefusal('nothing_to_merge', `${short(base)} already contains everything on ${ws.branch}`, {baseRef: short(base), branch: ws.branch})
  }

  const mt = await gitRaw(['merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', baseTip, work.commit], {cwd: checkout, timeoutMs: 120_000})
  const [tree, ...conflicted] = nul(mt.stdout.toString('utf8'))
  if (mt.code === 1) {
    const files = [...new Set(conflicted)]
    throw new WorkspaceRefusal('merge_conflict', `merging ${ws.branch} into ${short(base)} conflicts in ${files.length} file(s): ${files.slice(0, 5).join(', ')}${files.length > 5 ? ', ...' : ''}`, {files, baseRef: short(base), branch: ws.branch})
  }
  if (mt.code !== 0) throw new GitError(`git merge-tree failed: ${mt.stderr}`, mt)
  // A branch squashed in before is not an ancestor of the base, but merging it changes nothing.
  if (tree === (await git(['rev-parse', `${baseTip}^{tree}`], {cwd: checkout}))) {
    throw new WorkspaceRefusal('nothing_to_merge', `${short(base)} already has every change on ${ws.branch}`, {baseRef: short(base), branch: ws.branch})
  }

  const written = nul(await git(['diff-tree', '-r', '-z', '--no-renames', '--name-only', baseTip, tree], {cwd: checkout}))
  const dirty = nul(await git(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames'], {cwd: checkout})).map((e) => e.slice(3))
  const touched = new Set(written)
  const clash = dirty.filter((p) => touched.has(p))
  if (clash.length) {
    throw new WorkspaceRefusal('checkout_dirty', `the checkout has uncommitted changes to ${clash.length} file(s) the merge would write: ${clash.slice(0, 5).join(', ')}${clash.length > 5 ? ', ...' : ''}; commit or stash them first`, {files: clash, checkout})
  }

  const message = req.message?.trim() || (req.strategy === 'squash' ? `${req.agent.name}: work from ${ws.branch}` : `Merge branch '${ws.branch}' of agent ${req.agent.name}`)
  const landed =
    req.strategy === 'squash'
      ? await git(['commit-tree', tree, '-p', baseTip, '-m', message], {cwd: checkout, env: identityEnv(req.author, req.committer)})
      : await git(['commit-tree', tree, '-p', baseTip, '-p', work.commit, '-m', message], {cwd: checkout, env: identityEnv(req.committer, req.committer)})

  // read-tree trusts the index's stat data: refresh it so a file touched but unchanged is clean.
  await gitRaw(['update-index', '-q', '--refresh'], {cwd: checkout, timeoutMs: 120_000})
  const moved = await gitRaw(['read-tree', '-m', '-u', baseTip, tree], {cwd: checkout, timeoutMs: 120_000})
  if (moved.code !== 0) throw new WorkspaceRefusal('checkout_dirty', `the checkout could not be updated: ${moved.stderr}`, {files: [], checkout})
  const updated = await gitRaw(['update-ref', '-m', `svc: ${req.strategy} ${ws.branch} (agent ${req.agent.name})`, base, landed, baseTip], {cwd: checkout})
  if (updated.code !== 0) {
    // Someone moved the base meanwhile: put the files back as they were and let them decide.
    await gitRaw(['read-tree', '-m', '-u', tree, baseTip], {cwd: checkout, timeoutMs: 120_000})
    throw new WorkspaceRefusal('base_diverged', `${short(base)} moved while merging; merge again`, {baseRef: short(base), baseCommit: ws.baseCommit, current: null})
  }
  // The agent's branch, as landed, is in the checkout from now on.
  await git(['update-ref', '-m', `svc: work of agent ${req.agent.name}`, fullRef(ws.branch), work.commit], {cwd: checkout})
  return {merged: true, commit: landed, strategy: req.strategy, baseRef: short(base), branch: ws.branch, files: written}
}
