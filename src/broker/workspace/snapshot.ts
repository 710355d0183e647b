import {copyFileSync, existsSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {git, gitRaw} from './git.js'
import {identityEnv, WorkspaceRefusal, type Identity} from './refusal.js'

/**
 * The tree of everything in a worktree as it is now: committed, staged, unstaged and untracked
 * files (ignored ones not). It is written through a temporary index (GIT_INDEX_FILE) seeded with
 * a copy of the worktree's own, so the agent's index is never touched (an agent may be running
 * git at that moment) and `git add -A` rehashes only what changed since the agent's last index
 * refresh: a 5,000-file worktree costs a stat each, not a read each.
 */
export async function snapshotTree(worktree: string, timeoutMs = 120_000): Promise<{head: string; tree: string}> {
  const head = await git(['rev-parse', '--verify', 'HEAD^{commit}'], {cwd: worktree})
  const index = await git(['rev-parse', '--path-format=absolute', '--git-path', 'index'], {cwd: worktree})
  const dir = mkdtempSync(join(tmpdir(), 'svc-index-'))
  const tmpIndex = join(dir, 'index')
  try {
    if (existsSync(index)) copyFileSync(index, tmpIndex)
    const env = {GIT_INDEX_FILE: tmpIndex}
    await git(['add', '-A'], {cwd: worktree, env, timeoutMs})
    const tree = await git(['write-tree'], {cwd: worktree, env, timeoutMs})
    return {head, tree}
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

/** The commit the agent's work amounts to, written as an object only (no ref moves yet). */
export interface WorkCommit {
  /** The branch tip as found (the worktree's HEAD). */
  head: string
  /** `head`, or a new child of it holding what the agent left uncommitted. */
  commit: string
  created: boolean
}

/**
 * Checks the worktree is on the agent's branch and writes (as an unreferenced object) a commit
 * of what the agent left uncommitted: authored by the agent, committed by the user. Nothing a
 * user or the agent can see changes until `landWorkCommit`.
 */
export async function workCommit(worktree: string, branch: string, who: {author: Identity; committer: Identity; message: string}): Promise<WorkCommit> {
  const on = await gitRaw(['symbolic-ref', '-q', 'HEAD'], {cwd: worktree})
  const current = on.stdout.toString('utf8').trim()
  if (current !== `refs/heads/${branch}`) {
    throw new WorkspaceRefusal('workspace_off_branch', `the agent's worktree is not on its branch ${branch} (it is on ${current ? current.replace(/^refs\/heads\//, '') : 'a detached HEAD'}); check the branch out there or land the work by hand`, {branch, checkedOut: current || null})
  }
  const {head, tree} = await snapshotTree(worktree)
  const headTree = await git(['rev-parse', `${head}^{tree}`], {cwd: worktree})
  if (tree === headTree) return {head, commit: head, created: false}
  const commit = await git(['commit-tree', tree, '-p', head, '-m', who.message], {cwd: worktree, env: identityEnv(who.author, who.committer)})
  return {head, commit, created: true}
}

/**
 * Moves the agent's branch to its work commit (only if it still points where it did: an agent
 * that committed meanwhile gets a `conflict`), then refreshes the worktree's index so `git
 * status` there shows the work as committed. The files themselves are already the commit's.
 */
export async function landWorkCommit(worktree: string, branch: string, w: WorkCommit): Promise<void> {
  if (!w.created) return
  const r = await gitRaw(['update-ref', '-m', 'svc: commit the work the agent left uncommitted', `refs/heads/${branch}`, w.commit, w.head], {cwd: worktree})
  if (r.code !== 0) throw new WorkspaceRefusal('conflict', `the agent's branch ${branch} moved while its work was being committed; try again`, {branch})
  // Best effort: a locked index (the agent running git) only leaves `git status` stale there.
  await gitRaw(['reset', '-q'], {cwd: worktree})
}
