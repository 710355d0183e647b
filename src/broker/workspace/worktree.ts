/**
 * An agent's git workspace: a worktree of the project's checkout on a new branch `svc/<agent>`,
 * or a clone of the project's remote where this broker has no checkout. Every refusal happens
 * before anything is made, and a failure after that removes what was made: a failed create
 * leaves no worktree, branch or directory behind.
 */
import {existsSync, realpathSync} from 'node:fs'
import {mkdir, rm} from 'node:fs/promises'
import {dirname, isAbsolute, resolve} from 'node:path'
import type {AgentWorkspace} from '../../api/dto.js'
import {git, gitRaw, GitError} from './git.js'
import {WorkspaceRefusal} from './refusal.js'

export interface WorkspaceRequest {
  /** Absolute path of the project's checkout on this machine (project `localPath`). */
  checkout?: string | null
  /** The project's remote, cloned when there is no checkout here. */
  gitRemote?: string | null
  /** `svc/<agent-name>`. */
  branch: string
}

/**
 * Makes the workspace at `path` (which must not exist) and answers it; null when the project has
 * neither a checkout here nor a remote (the agent then works in an empty directory).
 */
export async function createWorkspace(req: WorkspaceRequest, path: string): Promise<AgentWorkspace | null> {
  if (req.checkout) return createWorktree(req.checkout, req.branch, path)
  if (req.gitRemote) return cloneInto(req.gitRemote, req.branch, path)
  return null
}

async function createWorktree(checkout: string, branch: string, path: string): Promise<AgentWorkspace> {
  if (!isAbsolute(checkout) || !existsSync(checkout)) throw new WorkspaceRefusal('checkout_invalid', `the project's checkout ${checkout} does not exist on this machine`)
  const top = await gitRaw(['rev-parse', '--show-toplevel'], {cwd: checkout, timeoutMs: 10_000})
  if (top.code !== 0) throw new WorkspaceRefusal('checkout_invalid', `${checkout} is not a git checkout (git rev-parse: ${top.stderr || 'failed'})`)
  const root = top.stdout.toString().trim()
  const head = await gitRaw(['symbolic-ref', '--short', '-q', 'HEAD'], {cwd: root, timeoutMs: 10_000})
  const baseRef = head.stdout.toString().trim()
  if (head.code !== 0 || !baseRef) throw new WorkspaceRefusal('checkout_detached', `the checkout ${root} has a detached HEAD: check out a branch (the agent's work is merged back into it)`)
  const commit = await gitRaw(['rev-parse', '--verify', '-q', 'HEAD^{commit}'], {cwd: root, timeoutMs: 10_000})
  if (commit.code !== 0) throw new WorkspaceRefusal('checkout_invalid', `the checkout ${root} has no commit yet on ${baseRef}: make a first commit`)
  const baseCommit = commit.stdout.toString().trim()
  // Tracked changes only: untracked files (such as the .svc/ that `svc project register` writes) do not count.
  const dirty = (await git(['status', '--porcelain', '--untracked-files=no'], {cwd: root, timeoutMs: 30_000})).split('\n').filter(Boolean)
  if (dirty.length) {
    const files = dirty.map((l) => l.slice(3))
    throw new WorkspaceRefusal('checkout_dirty', `the checkout ${root} has uncommitted changes (${files.slice(0, 5).join(', ')}${files.length > 5 ? ', ...' : ''}): commit or stash them first, so the agent starts from what you see`, {files})
  }
  if ((await gitRaw(['check-ref-format', `refs/heads/${branch}`], {cwd: root})).code !== 0) throw new WorkspaceRefusal('workspace_failed', `${branch} is not a valid branch name`)
  if ((await gitRaw(['rev-parse', '--verify', '-q', `refs/heads/${branch}`], {cwd: root})).code === 0) {
    throw new WorkspaceRefusal('branch_exists', `the branch ${branch} already exists in ${root}: delete it (git branch -D ${branch}) or give the agent another name`, {branch})
  }
  await mkdir(dirname(path), {recursive: true, mode: 0o700})
  const added = await gitRaw(['worktree', 'add', '-b', branch, path, baseCommit], {cwd: root, timeoutMs: 120_000})
  if (added.code !== 0) {
    await rm(path, {recursive: true, force: true})
    await gitRaw(['worktree', 'prune'], {cwd: root})
    if ((await gitRaw(['rev-parse', '--verify', '-q', `refs/heads/${branch}`], {cwd: root})).code === 0) await gitRaw(['branch', '-D', branch], {cwd: root})
    throw new WorkspaceRefusal('workspace_failed', `git worktree add failed: ${added.stderr}`)
  }
  return {path: realpathSync(path), branch, baseRef, baseCommit}
}

async function cloneInto(remote: string, branch: string, path: string): Promise<AgentWorkspace> {
  await mkdir(dirname(path), {recursive: true, mode: 0o700})
  // `--` keeps a remote that starts with '-' from being read as an option.
  const cloned = await gitRaw(['clone', '--quiet', '--', remote, path], {cwd: dirname(path), timeoutMs: 600_000})
  if (cloned.code !== 0) {
    await rm(path, {recursive: true, force: true})
    throw new WorkspaceRefusal('clone_failed', `cloning ${remote} failed: ${cloned.stderr || `exit code ${cloned.code}`}`)
  }
  try {
    const baseRef = await git(['symbolic-ref', '--short', 'HEAD'], {cwd: path})
    const baseCommit = await git(['rev-parse', 'HEAD'], {cwd: path})
    await git(['checkout', '-q', '-b', branch], {cwd: path})
    return {path: realpathSync(path), branch, baseRef, baseCommit}
  } catch (err) {
    await rm(path, {recursive: true, force: true})
    throw new WorkspaceRefusal('clone_failed', `the clone of ${remote} has no branch to start from: ${(err as Error).message}`)
  }
}

/** The top of the git checkout containing `path` (absolute, symlinks resolved), or null when it is in none. */
export async function checkoutRoot(path: string): Promise<string | null> {
  if (!isAbsolute(path) || !existsSync(path)) return null
  const r = await gitRaw(['rev-parse', '--show-toplevel'], {cwd: path, timeoutMs: 10_000})
  return r.code === 0 && r.stdout.toString().trim() ? realpathSync(r.stdout.toString().trim()) : null
}

/** The URL of the `origin` remote of the checkout containing `path`, or null (no checkout, no origin). */
export async function originUrl(path: string): Promise<string | null> {
  const r = await gitRaw(['remote', 'get-url', 'origin'], {cwd: path, timeoutMs: 10_000})
  return (r.code === 0 && r.stdout.toString().trim()) || null
}

/** The checkout's git directory a worktree commits into (objects, refs): the agent must write it. */
export async function commonGitDir(workspacePath: string): Promise<string | null> {
  const r = await gitRaw(['rev-parse', '--git-common-dir'], {cwd: workspacePath, timeoutMs: 10_000})
  return r.code === 0 ? resolve(workspacePath, r.stdout.toString().trim()) : null
}

/**
 * Removes the workspace's working tree and keeps its branch (the agent's commits stay reachable).
 * Forced: what is left uncommitted there is the agent's own and goes with it. `removeBranch` is
 * for undoing a create that failed after the worktree was made.
 */
export async function removeWorkspace(ws: AgentWorkspace, opts: {removeBranch?: boolean} = {}): Promise<void> {
  const common = existsSync(ws.path) ? await commonGitDir(ws.path) : null
  const main = common && !common.startsWith(ws.path) ? dirname(common) : null
  if (main) {
    const r = await gitRaw(['worktree', 'remove', '--force', '--force', ws.path], {cwd: main, timeoutMs: 120_000})
    if (r.code !== 0 && existsSync(ws.path)) throw new GitError(`git worktree remove failed: ${r.stderr}`, r)
    await gitRaw(['worktree', 'prune'], {cwd: main})
    if (opts.removeBranch) await gitRaw(['branch', '-D', ws.branch], {cwd: main})
    return
  }
  // A clone (its own .git inside), or a worktree whose checkout is gone.
  await rm(ws.path, {recursive: true, force: true})
}
