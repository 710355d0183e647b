/**
 * An agent's own repository (agent-repo.ts has the layout): made from the project's checkout
 * (objects borrowed read-only, refs its own, on a new branch `svc/<agent>`) or cloned from the
 * project's remote where this broker has no checkout. A refusal leaves nothing made (from a
 * checkout the repository is made while git checks it, and removed when it refuses), and a
 * failure after that removes what was made. Removing it never loses a commit: the
 * branch is fetched into the checkout (or, for a clone with unpushed commits, into a bare
 * repository under `kept-branches`) before the directories go.
 */
import {existsSync, realpathSync, writeFileSync} from 'node:fs'
import {mkdir, rm} from 'node:fs/promises'
import {basename, dirname, isAbsolute, join} from 'node:path'
import type {AgentWorkspace} from '../../api/dto.js'
import {agentRepoPaths, isLegacyWorkspace, readAgentHead, readAgentRef, readRecord, recordOrRefuse, writeRecord, type AgentRepoPaths, type AgentRepoRecord} from './agent-repo.js'
import {git, gitRaw, GitError} from './git.js'
import {ensureHostRepo, fetchFromAgent, hostGit, hostGitRaw, prepareHostRead} from './host-git.js'
import {WorkspaceRefusal} from './refusal.js'
import {initAgentRepo} from './repo-init.js'
import {checkoutGuess} from './checkout-head.js'

export {agentRepoPaths}

export interface WorkspaceRequest {
  /** Absolute path of the project's checkout on this machine (project `localPath`). */
  checkout?: string | null
  /** The project's remote, cloned when there is no checkout here. */
  gitRemote?: string | null
  /** `svc/<agent-name>`. */
  branch: string
  /** Teams: the parent whose branch head a child starts from (its repository is on this broker). */
  parent?: {agentId: string; branch: string}
}

/** git run in the agent's repository, before the agent ever ran in it (its config is still svc's). */
const inNewRepo = (p: AgentRepoPaths, args: string[]) => git(args, {cwd: p.workdir, untrusted: true, env: {GIT_DIR: p.gitDir, GIT_WORK_TREE: p.workdir}, timeoutMs: 300_000})

/**
 * Makes the agent's repository and work tree (neither may exist) and answers the workspace; null
 * when the project has neither a checkout here nor a remote (the agent then works in an empty
 * directory).
 */
export async function createWorkspace(req: WorkspaceRequest, paths: AgentRepoPaths): Promise<AgentWorkspace | null> {
  if (req.parent) return fromParent(req.parent, req.branch, paths)
  if (req.checkout) return fromCheckout(req.checkout, req.branch, paths)
  if (req.gitRemote) return fromRemote(req.gitRemote, req.branch, paths)
  return null
}

/** Changed tracked files in `git status --porcelain=v2` output (paths relative to the top directory). */
function changedFiles(status: string): string[] {
  // Fields before the path: 8 for a change, 9 for a rename or copy (then "path<TAB>old path"), 10 for a conflict.
  const before: Record<string, number> = {'1': 8, '2': 9, u: 10}
  return status.split('\n').flatMap((l) => {
    const n = before[l.slice(0, l.indexOf(' '))]
    return n ? [l.split(' ').slice(n).join(' ').split('\t')[0]!] : []
  })
}

/**
 * A branch name whose `refs/heads/<name>` git's check-ref-format accepts for certain: components
 * of letters, digits, `_` and `-` starting with a letter or digit (no `.`, `@`, `~`, `^`, `:`,
 * `?`, `*`, `[`, `\\`, space or control character, no empty component). Any other name is asked
 * of git itself, so this only ever saves a process, never accepts what git refuses.
 */
const SURELY_VALID_BRANCH = /^[A-Za-z0-9][A-Za-z0-9_-]*(?:\/[A-Za-z0-9][A-Za-z0-9_-]*)*$/

/**
 * What an agent's repository starts from: the checkout's top directory, its object directory,
 * its branch and commit. Refuses what cannot be one (not a checkout, a detached HEAD, no commit,
 * uncommitted changes) and a branch name that is invalid or taken. Every agent start waits for
 * this, so it is at most three git processes run at once (one `rev-parse` answers the places and
 * whether the branch exists, one `status` the branch, the commit and the changes, and
 * `check-ref-format` only for a name SURELY_VALID_BRANCH does not vouch for); the refusals are
 * still decided in this order.
 */
async function checkoutBase(checkout: string, branch: string): Promise<{root: string; objects: string; baseRef: string; baseCommit: string}> {
  if (!isAbsolute(checkout) || !existsSync(checkout)) throw new WorkspaceRefusal('checkout_invalid', `the project's checkout ${checkout} does not exist on this machine`)
  const opts = {cwd: checkout, timeoutMs: 10_000}
  const [places, status, refFormat] = await Promise.all([
    // Prints the two places, then the branch's commit when it exists; exits 1 when it does not
    // (the places printed all the same), 128 outside a work tree.
    gitRaw(['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir', '--verify', '-q', `refs/heads/${branch}`], opts),
    // Tracked changes only: untracked files (such as the .svc/ that `svc project register` writes) do not count.
    gitRaw(['-c', 'status.relativePaths=false', 'status', '--porcelain=v2', '--branch', '--untracked-files=no'], {...opts, timeoutMs: 30_000}),
    SURELY_VALID_BRANCH.test(branch) ? {code: 0} : gitRaw(['check-ref-format', `refs/heads/${branch}`], opts),
  ])
  const [root, common, existing] = places.stdout.toString().split('\n')
  if ((places.code !== 0 && places.code !== 1) || !root || !common) throw new WorkspaceRefusal('checkout_invalid', `${checkout} is not a git checkout (git rev-parse: ${places.stderr || 'failed'})`)
  if (status.code !== 0) throw new GitError(`git status failed: ${status.stderr || `exit code ${status.code}`}`, status)
  const text = status.stdout.toString()
  const header = (key: string) => new RegExp(`^# branch\\.${key} (.*)$`, 'm').exec(text)?.[1]
  const baseRef = header('head') ?? ''
  if (!baseRef || baseRef === '(detached)') throw new WorkspaceRefusal('checkout_detached', `the checkout ${root} has a detached HEAD: check out a branch (the agent's work is merged back into it)`)
  const baseCommit = header('oid') ?? ''
  if (!/^[0-9a-f]{40,64}$/.test(baseCommit)) throw new WorkspaceRefusal('checkout_invalid', `the checkout ${root} has no commit yet on ${baseRef}: make a first commit`)
  const files = changedFiles(text)
  if (files.length) {
    throw new WorkspaceRefusal('checkout_dirty', `the checkout ${root} has uncommitted changes (${files.slice(0, 5).join(', ')}${files.length > 5 ? ', ...' : ''}): commit or stash them first, so the agent starts from what you see`, {files})
  }
  if (refFormat.code !== 0) throw new WorkspaceRefusal('workspace_failed', `${branch} is not a valid branch name`)
  // The branch comes back to the checkout when the agent is merged or deleted: it must be free.
  if (places.code === 0 && existing) {
    throw new WorkspaceRefusal('branch_exists', `the branch ${branch} already exists in ${root}: delete it (git branch -D ${branch}) or give the agent another name`, {branch})
  }
  return {root, objects: realpathSync(join(common, 'objects')), baseRef, baseCommit}
}

/**
 * From the checkout: the repository is made from the commit the checkout's files name while git
 * checks the checkout (checkout-head.ts), then kept only when the checks pass and name the same
 * places and commit; a refusal removes it (so nothing is left, as when refusals came first), and
 * anything else git answers is made again from that.
 */
async function fromCheckout(checkout: string, branch: string, paths: AgentRepoPaths): Promise<AgentWorkspace> {
  const guess = checkoutGuess(checkout)
  const fromBase = (b: {root: string; objects: string; baseRef: string; baseCommit: string}) =>
    make(paths, {version: 1, objects: b.objects, alternates: `${b.objects}\n`, checkout: b.root, remote: null}, async () => {
      // On the unborn branch `git init` made, `reset --hard <commit>` sets the branch and checks it out (one process).
      await inNewRepo(paths, ['reset', '-q', '--hard', b.baseCommit])
      return {path: realpathSync(paths.workdir), branch, baseRef: b.baseRef, baseCommit: b.baseCommit}
    }, branch)
  if (!guess) return fromBase(await checkoutBase(checkout, branch))
  const [checked, made] = await Promise.allSettled([checkoutBase(checkout, branch), fromBase({...guess, baseRef: guess.branch, baseCommit: guess.commit})])
  if (checked.status === 'rejected') {
    if (made.status === 'fulfilled') await removeAll(paths)
    throw checked.reason
  }
  const base = checked.value
  if (made.status === 'fulfilled' && base.root === guess.root && base.objects === guess.objects && base.baseRef === guess.branch && base.baseCommit === guess.commit) return made.value
  if (made.status === 'fulfilled') await removeAll(paths)
  return fromBase(base)
}

/**
 * A child's repository: its branch made from its parent's branch head (read from the parent's
 * repository as svc reads any agent's: plain files, a hash only), the parent's objects it needs
 * fetched from svc's repository of the parent (re-hashed), the checkout's borrowed like the
 * parent's. `baseRef` is the parent's branch: the child's work lands there.
 */
async function fromParent(parent: {agentId: string; branch: string}, branch: string, paths: AgentRepoPaths): Promise<AgentWorkspace> {
  const pp = agentRepoPaths(paths.stateDir, parent.agentId)
  const prec = recordOrRefuse(pp)
  await prepareHostRead(pp, prec)
  const tip = readAgentRef(pp, `refs/heads/${parent.branch}`)
  if (!tip) throw new WorkspaceRefusal('workspace_failed', `the parent's branch ${parent.branch} has no commit to start from`, {branch: parent.branch})
  if (prec.checkout && existsSync(prec.checkout) && (await gitRaw(['rev-parse', '--verify', '-q', `refs/heads/${branch}`], {cwd: prec.checkout})).code === 0) {
    throw new WorkspaceRefusal('branch_exists', `the branch ${branch} already exists in ${prec.checkout}: delete it (git branch -D ${branch}) or give the agent another name`, {branch})
  }
  const rec: AgentRepoRecord = {version: 1, objects: prec.objects, alternates: prec.objects ? `${prec.objects}\n` : '', checkout: prec.checkout, remote: prec.remote}
  return make(paths, rec, async () => {
    // Into a ref of svc's first: git will not fetch into the branch the new repository has checked out.
    const r = await fetchFromAgent(pp, paths.gitDir, tip, 'refs/svc/parent-base', {force: true})
    if (r.code !== 0) throw new WorkspaceRefusal('workspace_tampered', `the parent's work could not be taken (git fetch checks every object): ${r.stderr.trim()}`)
    await inNewRepo(paths, ['update-ref', `refs/heads/${branch}`, tip])
    await inNewRepo(paths, ['update-ref', '-d', 'refs/svc/parent-base'])
    await inNewRepo(paths, ['reset', '-q', '--hard'])
    return {path: realpathSync(paths.workdir), branch, baseRef: parent.branch, baseCommit: tip}
  }, branch)
}

async function fromRemote(remote: string, branch: string, paths: AgentRepoPaths): Promise<AgentWorkspace> {
  await mkdirs(paths)
  // `--` keeps a remote that starts with '-' from being read as an option. Run as the user (their
  // credentials); no template, so the new repository has no hooks.
  const cloned = await gitRaw(['clone', '--quiet', '--template=', `--separate-git-dir=${paths.gitDir}`, '--', remote, paths.workdir], {cwd: dirname(paths.workdir), timeoutMs: 600_000})
  if (cloned.code !== 0) {
    await removeAll(paths)
    throw new WorkspaceRefusal('clone_failed', `cloning ${remote} failed: ${cloned.stderr || `exit code ${cloned.code}`}`)
  }
  try {
    const at = readAgentHead(paths)
    if (!at.ref || !at.commit) throw new Error('the remote has no default branch with a commit')
    await inNewRepo(paths, ['checkout', '-q', '-b', branch])
    const rec: AgentRepoRecord = {version: 1, objects: null, alternates: '', checkout: null, remote}
    await ensureHostRepo(paths, rec)
    writeRecord(paths, rec)
    return {path: realpathSync(paths.workdir), branch, baseRef: at.ref.replace(/^refs\/heads\//, ''), baseCommit: at.commit}
  } catch (err) {
    await removeAll(paths)
    throw new WorkspaceRefusal('clone_failed', `the clone of ${remote} has no branch to start from: ${(err as Error).message}`)
  }
}

/**
 * Makes an empty repository borrowing `rec.objects` (as files where git allows: repo-init.ts), runs `fill`, writes the record; undoes all on
 * failure. svc's own repository (`review/<id>.git`) is not made here: every host read makes it
 * first (prepareHostRead, ensureHostRepo), and an agent's start, which waits for this, spares
 * the git process.
 */
async function make(paths: AgentRepoPaths, rec: AgentRepoRecord, fill: () => Promise<AgentWorkspace>, branch: string): Promise<AgentWorkspace> {
  await mkdirs(paths)
  try {
    await initAgentRepo(paths, branch)
    await mkdir(join(paths.gitDir, 'objects', 'info'), {recursive: true})
    writeFileSync(join(paths.gitDir, 'objects', 'info', 'alternates'), rec.alternates)
    const ws = await fill()
    writeRecord(paths, rec)
    return ws
  } catch (err) {
    await removeAll(paths)
    if (err instanceof WorkspaceRefusal) throw err
    throw new WorkspaceRefusal('workspace_failed', `making the agent's repository failed: ${(err as Error).message}`)
  }
}

async function mkdirs(paths: AgentRepoPaths) {
  for (const d of [paths.workdir, paths.gitDir, paths.hostDir]) await mkdir(dirname(d), {recursive: true, mode: 0o700})
}

/** Removes the work tree, both repositories and the record (none of it holds a link svc would follow). */
async function removeAll(paths: AgentRepoPaths) {
  for (const p of [paths.workdir, paths.gitDir, paths.hostDir, paths.record]) await rm(p, {recursive: true, force: true})
}

/** Where the branch of a removed clone with unpushed commits is kept. */
export const keptRepoPath = (paths: AgentRepoPaths) => join(paths.stateDir, 'kept-branches', `${paths.agentId}.git`)

/**
 * Removes the agent's work tree and repositories and keeps its branch: fetched into the checkout
 * as `svc/<agent>` (or `svc/<agent>-<id>` when that name moved meanwhile), or, without a
 * checkout, into `kept-branches/<id>.git` when it holds commits the remote never got from svc.
 * What is left uncommitted is the agent's own and goes. Answers a kept repository's path, else
 * null. `removeBranch` undoes a create that failed (nothing of the agent's is there yet).
 */
export async function removeWorkspace(paths: AgentRepoPaths, ws: AgentWorkspace | null, opts: {removeBranch?: boolean; checkout?: string | null} = {}): Promise<string | null> {
  const rec = readRecord(paths)
  if (!rec) {
    const legacy = isLegacyWorkspace(paths)
    await rm(paths.workdir, {recursive: true, force: true})
    // The worktree's registration in the checkout goes; its branch stays there.
    if (legacy && opts.checkout && existsSync(opts.checkout)) await gitRaw(['worktree', 'prune'], {cwd: opts.checkout}).catch(() => {})
    await removeAll(paths)
    return null
  }
  let kept: string | null = null
  if (!opts.removeBranch && ws?.branch) kept = await keepBranch(paths, rec, ws)
  await removeAll(paths)
  return kept
}

async function keepBranch(paths: AgentRepoPaths, rec: AgentRepoRecord, ws: AgentWorkspace): Promise<string | null> {
  let tip: string | null
  try {
    tip = readAgentRef(paths, `refs/heads/${ws.branch}`)
    await ensureHostRepo(paths, rec)
  } catch {
    return null
  }
  if (!tip) return null
  if (rec.checkout && existsSync(rec.checkout)) {
    // Already there (a merge or push brought it, perhaps with the uncommitted work on top): nothing to keep.
    if ((await gitRaw(['merge-base', '--is-ancestor', tip, `refs/heads/${ws.branch}`], {cwd: rec.checkout})).code === 0) return null
    const r = await fetchFromAgent(paths, rec.checkout, tip, `refs/heads/${ws.branch}`)
    if (r.code !== 0) await fetchFromAgent(paths, rec.checkout, tip, `refs/heads/${ws.branch}-${paths.agentId.slice(0, 8)}`)
    return null
  }
  if (tip === ws.baseCommit) return null
  const pushed = (await hostGitRaw(paths, ['rev-parse', '--verify', '-q', 'refs/svc/pushed'])).stdout.toString('utf8').trim()
  if (pushed && (await hostGitRaw(paths, ['merge-base', '--is-ancestor', tip, pushed])).code === 0) return null
  let target = keptRepoPath(paths)
  for (let n = 2; existsSync(target); n++) target = join(dirname(target), `${paths.agentId}-${n}.git`)
  await mkdir(dirname(target), {recursive: true, mode: 0o700})
  await git(['init', '-q', '--bare', '--template=', target], {cwd: dirname(target), untrusted: true})
  const r = await fetchFromAgent(paths, target, tip, `refs/heads/${ws.branch}`)
  if (r.code !== 0) throw new GitError(`keeping ${ws.branch} failed: ${r.stderr}`, r)
  return target
}

/**
 * Puts an agent's work tree back (its directory vanished: removed by hand, a tmp cleaner) on its
 * existing branch, keeping the recorded `baseRef`/`baseCommit`. Its repository still holds every
 * commit: the files of its HEAD are checked out again (through svc's repository). When the
 * repository went too, a clone comes back from the remote on the branch as the remote has it;
 * anything else is `workspace_missing`. Refusals come before anything is made.
 */
export async function reattachWorkspace(req: WorkspaceRequest, existing: AgentWorkspace, paths: AgentRepoPaths): Promise<AgentWorkspace> {
  const branch = existing.branch
  if (existsSync(paths.workdir)) throw new WorkspaceRefusal('workspace_failed', `cannot put the agent's workspace back at ${paths.workdir}: something else is there`, {path: paths.workdir})
  const rec = readRecord(paths)
  if (rec && existsSync(join(paths.gitDir, 'HEAD'))) {
    const head = readAgentHead(paths).commit
    if (!head) throw new WorkspaceRefusal('workspace_missing', `the agent's repository ${paths.gitDir} has no commit on ${branch}`, {path: existing.path, branch})
    await ensureHostRepo(paths, rec)
    await mkdir(paths.workdir, {recursive: true, mode: 0o755})
    try {
      writeFileSync(join(paths.workdir, '.git'), `gitdir: ${paths.gitDir}\n`)
      const index = join(paths.hostDir, `reattach-${process.pid}.index`)
      try {
        await hostGit(paths, ['read-tree', head], {workTree: true, env: {GIT_INDEX_FILE: index}})
        await hostGit(paths, ['checkout-index', '-a', '-f'], {workTree: true, env: {GIT_INDEX_FILE: index}, timeoutMs: 300_000})
      } finally {
        await rm(index, {force: true})
      }
      return {...existing, path: realpathSync(paths.workdir)}
    } catch (err) {
      await rm(paths.workdir, {recursive: true, force: true})
      throw err
    }
  }
  const remote = req.gitRemote ?? rec?.remote
  if (req.checkout || !remote) {
    throw new WorkspaceRefusal('workspace_missing', `the agent's workspace ${existing.path} and its repository no longer exist${req.checkout ? `; what it had merged or pushed is on ${branch} in the checkout or the remote` : ''}. Delete the agent and create a new one`, {path: existing.path, branch})
  }
  await removeAll(paths)
  await mkdirs(paths)
  const heads = await gitRaw(['ls-remote', '--heads', '--', remote, `refs/heads/${branch}`], {cwd: dirname(paths.workdir), timeoutMs: 120_000})
  if (heads.code !== 0) throw new WorkspaceRefusal('clone_failed', `reading ${remote} failed: ${heads.stderr || `exit code ${heads.code}`}`)
  if (!heads.stdout.toString('utf8').trim()) {
    throw new WorkspaceRefusal('workspace_missing', `the agent's clone ${existing.path} no longer exists and ${remote} has no branch ${branch}: its unpushed commits were only in that directory. Delete the agent and create a new one`, {path: existing.path, branch})
  }
  const cloned = await gitRaw(['clone', '--quiet', '--template=', `--separate-git-dir=${paths.gitDir}`, '--', remote, paths.workdir], {cwd: dirname(paths.workdir), timeoutMs: 600_000})
  try {
    if (cloned.code !== 0) throw new WorkspaceRefusal('clone_failed', `cloning ${remote} failed: ${cloned.stderr || `exit code ${cloned.code}`}`)
    await inNewRepo(paths, ['checkout', '-q', '-b', branch, `refs/remotes/origin/${branch}`]).catch((err) => {
      throw new WorkspaceRefusal('clone_failed', `checking out ${branch} in the new clone of ${remote} failed: ${(err as Error).message}`)
    })
    const r: AgentRepoRecord = {version: 1, objects: null, alternates: '', checkout: null, remote}
    await ensureHostRepo(paths, r)
    writeRecord(paths, r)
    return {...existing, path: realpathSync(paths.workdir)}
  } catch (err) {
    await removeAll(paths)
    throw err
  }
}

/** Records the commit svc pushed for the agent: a clone's removal keeps only what is newer. */
export async function markPushed(paths: AgentRepoPaths, commit: string): Promise<void> {
  await hostGit(paths, ['update-ref', 'refs/svc/pushed', commit])
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

/** The agent paths for a workspace directory `<stateDir>/workspaces/<id>`. */
export const pathsOfWorkdir = (workdir: string) => agentRepoPaths(dirname(dirname(workdir)), basename(workdir))
