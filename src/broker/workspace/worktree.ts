/**
 * An agent's git workspace: a worktree of the project's checkout on a new branch `svc/<agent>`,
 * or a clone of the project's remote where this broker has no checkout. Every refusal happens
 * before anything is made, and a failure after that removes what was made: a failed create
 * leaves no worktree, branch or directory behind. Removing a workspace never loses a commit: a
 * worktree's branch stays in the checkout, and a clone with unpushed commits is kept as a bare
 * repository under `kept-branches`.
 */
import {existsSync, realpathSync, statSync} from 'node:fs'
import {cp, mkdir, rename, rm} from 'node:fs/promises'
import {basename, dirname, isAbsolute, join, resolve} from 'node:path'
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
 * Where the repository of a removed clone with unpushed commits is kept:
 * `<stateDir>/kept-branches/<agent-id>.git` for the workspace `<stateDir>/workspaces/<agent-id>`.
 */
export const keptRepoPath = (workspacePath: string) => join(dirname(dirname(workspacePath)), 'kept-branches', `${basename(workspacePath)}.git`)

/** What `.git` in a workspace is: a clone's own repository (a directory), a worktree's link to its checkout (a file), or nothing. */
function gitKind(path: string): 'clone' | 'worktree' | null {
  const st = statSync(join(path, '.git'), {throwIfNoEntry: false})
  return st?.isDirectory() ? 'clone' : st?.isFile() ? 'worktree' : null
}

/**
 * Removes the workspace's working tree and keeps its branch (the agent's commits stay reachable).
 * Forced: what is left uncommitted there is the agent's own and goes with it. A worktree's branch
 * stays in the checkout. A clone's branches lived only in the clone: when a branch (or a
 * detached HEAD, or a stash) has a commit no remote-tracking ref contains, the clone's
 * repository is moved to `keptRepoPath` and made bare before the working tree goes; answers that
 * path (null when nothing was kept). `removeBranch` is for undoing a create that failed after the
 * workspace was made (nothing of the agent's is there yet).
 */
export async function removeWorkspace(ws: AgentWorkspace, opts: {removeBranch?: boolean} = {}): Promise<string | null> {
  if (!existsSync(ws.path)) return null
  const kind = gitKind(ws.path)
  if (kind === 'clone') {
    const kept = opts.removeBranch ? null : await keepUnpushed(ws.path)
    await rm(ws.path, {recursive: true, force: true})
    return kept
  }
  const common = kind === 'worktree' ? await commonGitDir(ws.path) : null
  const main = common && existsSync(common) ? dirname(common) : null
  if (main) {
    const r = await gitRaw(['worktree', 'remove', '--force', '--force', ws.path], {cwd: main, timeoutMs: 120_000})
    if (r.code !== 0 && existsSync(ws.path)) throw new GitError(`git worktree remove failed: ${r.stderr}`, r)
    await gitRaw(['worktree', 'prune'], {cwd: main})
    if (opts.removeBranch) await gitRaw(['branch', '-D', ws.branch], {cwd: main})
    return null
  }
  // A worktree whose checkout is gone (its branch went with it), or no git at all.
  await rm(ws.path, {recursive: true, force: true})
  return null
}

/** Moves a clone's repository to `keptRepoPath` when it holds commits no remote has; answers where, or null. */
async function keepUnpushed(path: string): Promise<string | null> {
  // Local refs only (branches, tags, a detached HEAD, a stash), nothing fetched: a
  // remote-tracking ref is what this clone knows was pushed.
  // A failing rev-list (a damaged repository) keeps it too: unsure is not empty.
  const stash = (await gitRaw(['rev-parse', '--verify', '-q', 'refs/stash'], {cwd: path})).code === 0 ? ['refs/stash'] : []
  const r = await gitRaw(['rev-list', '--max-count=1', 'HEAD', '--branches', '--tags', ...stash, '--not', '--remotes'], {cwd: path, timeoutMs: 60_000})
  if (r.code === 0 && !r.stdout.toString('utf8').trim()) return null
  let target = keptRepoPath(path)
  await mkdir(dirname(target), {recursive: true, mode: 0o700})
  // Never over another kept repository (an agent ID is used once, but be sure).
  for (let n = 2; existsSync(target); n++) target = join(dirname(target), `${basename(path)}-${n}.git`)
  try {
    await rename(join(path, '.git'), target)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err
    // The workspaces directory on another file system: copy, and remove only once copied.
    await cp(join(path, '.git'), target, {recursive: true, preserveTimestamps: true})
  }
  // Without a working tree it is a bare repository; `git fetch <target>` works either way, so a
  // failure here does not stop the removal.
  await gitRaw(['config', 'core.bare', 'true'], {cwd: target})
  return target
}

/**
 * Puts an agent's workspace back at `path` (its directory vanished: removed by hand, a tmp
 * cleaner) on its existing branch, keeping the recorded `baseRef`/`baseCommit`; no branch is made.
 * With a checkout: `git worktree add <path> <branch>` (the branch must still be there). Without
 * one: a fresh clone of the remote, on the branch as the remote has it; a branch that was never
 * pushed died with the directory, and that is `workspace_missing`. Refusals come before anything
 * is made; a failure after that removes it again.
 */
export async function reattachWorkspace(req: WorkspaceRequest, existing: AgentWorkspace, path: string): Promise<AgentWorkspace> {
  const branch = existing.branch
  if (existsSync(path)) throw new WorkspaceRefusal('workspace_failed', `cannot put the agent's workspace back at ${path}: something else is there`, {path})
  if (req.checkout) return reattachWorktree(req.checkout, existing, path)
  if (!req.gitRemote) throw new WorkspaceRefusal('workspace_missing', `the agent's workspace ${existing.path} no longer exists and the project has neither a checkout on this broker nor a remote to get ${branch} from`, {path: existing.path})
  const remote = req.gitRemote
  await mkdir(dirname(path), {recursive: true, mode: 0o700})
  const heads = await gitRaw(['ls-remote', '--heads', '--', remote, `refs/heads/${branch}`], {cwd: dirname(path), timeoutMs: 120_000})
  if (heads.code !== 0) throw new WorkspaceRefusal('clone_failed', `reading ${remote} failed: ${heads.stderr || `exit code ${heads.code}`}`)
  if (!heads.stdout.toString('utf8').trim()) {
    throw new WorkspaceRefusal('workspace_missing', `the agent's clone ${existing.path} no longer exists and ${remote} has no branch ${branch}: its unpushed commits were only in that directory. Delete the agent and create a new one`, {path: existing.path, branch})
  }
  const cloned = await gitRaw(['clone', '--quiet', '--origin', 'origin', '--', remote, path], {cwd: dirname(path), timeoutMs: 600_000})
  try {
    if (cloned.code !== 0) throw new WorkspaceRefusal('clone_failed', `cloning ${remote} failed: ${cloned.stderr || `exit code ${cloned.code}`}`)
    const r = await gitRaw(['checkout', '-q', '-b', branch, `refs/remotes/origin/${branch}`], {cwd: path})
    if (r.code !== 0) throw new WorkspaceRefusal('clone_failed', `checking out ${branch} in the new clone of ${remote} failed: ${r.stderr}`)
    return {...existing, path: realpathSync(path)}
  } catch (err) {
    await rm(path, {recursive: true, force: true})
    throw err
  }
}

async function reattachWorktree(checkout: string, existing: AgentWorkspace, path: string): Promise<AgentWorkspace> {
  const branch = existing.branch
  if (!isAbsolute(checkout) || !existsSync(checkout)) throw new WorkspaceRefusal('checkout_invalid', `the project's checkout ${checkout} does not exist on this machine`)
  const top = await gitRaw(['rev-parse', '--show-toplevel'], {cwd: checkout, timeoutMs: 10_000})
  if (top.code !== 0) throw new WorkspaceRefusal('checkout_invalid', `${checkout} is not a git checkout (git rev-parse: ${top.stderr || 'failed'})`)
  const root = top.stdout.toString().trim()
  if ((await gitRaw(['rev-parse', '--verify', '-q', `refs/heads/${branch}`], {cwd: root})).code !== 0) {
    throw new WorkspaceRefusal('workspace_missing', `the agent's worktree ${existing.path} no longer exists and its branch ${branch} is gone from ${root} too`, {path: existing.path, branch})
  }
  // The vanished worktree is still registered (and holds the branch) until pruned.
  await gitRaw(['worktree', 'prune'], {cwd: root})
  await mkdir(dirname(path), {recursive: true, mode: 0o700})
  // A bare branch name checks that branch out (a full ref would detach HEAD).
  const added = await gitRaw(['worktree', 'add', path, branch], {cwd: root, timeoutMs: 120_000})
  if (added.code !== 0) {
    await rm(path, {recursive: true, force: true})
    await gitRaw(['worktree', 'prune'], {cwd: root})
    throw new WorkspaceRefusal('workspace_failed', `git worktree add of ${branch} failed: ${added.stderr}`, {branch})
  }
  return {...existing, path: realpathSync(path)}
}
