/**
 * Git run on the host for an agent: always in svc's own repository `review/<id>.git`
 * (agent-repo.ts), hardened (git.ts `untrusted`), with the agent's work tree named outright when
 * the command reads it. Also the few steps every review operation shares: the snapshot of what
 * the agent has now, and the commit its uncommitted work amounts to.
 */
import {randomBytes} from 'node:crypto'
import {existsSync, mkdtempSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {mkdir, rename, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import type {RunResult} from '../runtimes/run-command.js'
import {checkAgentRepo, readAgentFile, readAgentHead, type AgentRepoPaths, type AgentRepoRecord} from './agent-repo.js'
import {GitError, gitRaw} from './git.js'
import {identityEnv, WorkspaceRefusal, type Identity} from './refusal.js'

export interface HostGitOptions {
  /** The command reads the agent's work tree (GIT_WORK_TREE, run from inside it). */
  workTree?: boolean
  env?: Record<string, string>
  timeoutMs?: number
  maxStdoutBytes?: number
}

export function hostGitRaw(paths: AgentRepoPaths, args: string[], opts: HostGitOptions = {}): Promise<RunResult> {
  const env: Record<string, string> = {GIT_DIR: paths.hostDir, ...(opts.workTree && {GIT_WORK_TREE: paths.workdir}), ...opts.env}
  return gitRaw(args, {cwd: opts.workTree ? paths.workdir : paths.hostDir, untrusted: true, env, timeoutMs: opts.timeoutMs, maxStdoutBytes: opts.maxStdoutBytes})
}

export async function hostGit(paths: AgentRepoPaths, args: string[], opts: HostGitOptions = {}): Promise<string> {
  const r = await hostGitRaw(paths, args, opts)
  if (r.code !== 0) throw new GitError(`git ${args[0]} failed: ${r.stderr || `exit code ${r.code}`}`, r)
  return r.stdout.toString('utf8').replace(/\n$/, '')
}

// Inits in progress in this process, by directory: concurrent first reads share one.
const initing = new Map<string, Promise<void>>()

/**
 * Makes (or repairs) svc's repository for the agent: bare, no templates (so no hooks), and
 * alternates naming the agent's objects and the checkout's. Rewritten every time: svc's own file.
 * Made by the first host read, which may come several at once (a lead's children starting from
 * its branch, a diff beside a merge): one init per directory, made aside and renamed into place,
 * so no reader sees half a repository and a second init never fails on the first one's lock.
 */
export async function ensureHostRepo(paths: AgentRepoPaths, rec: AgentRepoRecord): Promise<void> {
  if (!existsSync(join(paths.hostDir, 'HEAD'))) {
    let init = initing.get(paths.hostDir)
    if (!init) {
      init = initHostRepo(paths.hostDir).finally(() => initing.delete(paths.hostDir))
      initing.set(paths.hostDir, init)
    }
    await init
  }
  const alternates = [join(paths.gitDir, 'objects'), ...(rec.objects ? [rec.objects] : [])].join('\n') + '\n'
  const info = join(paths.hostDir, 'objects', 'info')
  await mkdir(info, {recursive: true})
  // Replaced whole: a git reading it meanwhile sees the old list or the new, never a cut one.
  const tmp = join(info, `alternates.${randomBytes(6).toString('hex')}.tmp`)
  writeFileSync(tmp, alternates)
  renameSync(tmp, join(info, 'alternates'))
}

async function initHostRepo(hostDir: string): Promise<void> {
  await mkdir(dirname(hostDir), {recursive: true, mode: 0o700})
  const aside = `${hostDir}.${randomBytes(6).toString('hex')}.tmp`
  try {
    const r = await gitRaw(['init', '-q', '--bare', '--template=', aside], {cwd: dirname(hostDir), untrusted: true})
    if (r.code !== 0) throw new GitError(`git init failed: ${r.stderr}`, r)
    await rename(aside, hostDir)
  } catch (err) {
    // Another process made it first (the rename finds a full directory): that one is kept.
    if (!existsSync(join(hostDir, 'HEAD'))) throw err
  } finally {
    await rm(aside, {recursive: true, force: true})
  }
}

/** Checks the agent's repository (agent-repo.ts) and makes sure svc's own is there. */
export async function prepareHostRead(paths: AgentRepoPaths, rec: AgentRepoRecord): Promise<void> {
  checkAgentRepo(paths, rec)
  await ensureHostRepo(paths, rec)
}

/**
 * The tree of everything in the agent's work tree as it is now: committed, staged, unstaged and
 * untracked files (ignored ones not), through a temporary index seeded with a copy of the
 * agent's own (so `add -A` rehashes only what changed since the agent's last refresh, and the
 * agent's index is never touched). Answers the agent's HEAD commit too.
 */
export async function snapshotTree(paths: AgentRepoPaths, timeoutMs = 120_000): Promise<{head: string; tree: string}> {
  const {commit: head} = readAgentHead(paths)
  if (!head) throw new WorkspaceRefusal('workspace_failed', "the agent's branch has no commit")
  const dir = mkdtempSync(join(tmpdir(), 'svc-index-'))
  const tmpIndex = join(dir, 'index')
  try {
    const index = readAgentFile(paths.gitDir, 'index', 512 << 20)
    if (index) writeFileSync(tmpIndex, index)
    const env = {GIT_INDEX_FILE: tmpIndex}
    // --ignore-errors: what cannot be added (a nested repository with no commit, an unreadable
    // file) is left out, not a failure of the whole snapshot; git then exits 1.
    const added = await hostGitRaw(paths, ['add', '-A', '--ignore-errors'], {workTree: true, env, timeoutMs})
    if (added.code !== 0 && added.code !== 1) throw new GitError(`git add failed: ${added.stderr || `exit code ${added.code}`}`, added)
    const tree = await hostGit(paths, ['write-tree'], {workTree: true, env, timeoutMs})
    return {head, tree}
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

/** The commit the agent's work amounts to, as an object of svc's repository. */
export interface WorkCommit {
  /** The agent's branch tip as found. */
  head: string
  /** `head`, or a commit holding what the agent left uncommitted on top of it. */
  commit: string
  created: boolean
}

/** Longest subject line of a work commit (git's own convention for a first line). */
const SUBJECT_MAX = 72

/**
 * The message of the commit holding what an agent left uncommitted: its task's first line (cut
 * to fit a subject line) and who it was; without a task, just who.
 */
export function workMessage(agent: {name: string; task?: string | null}): string {
  const who = `Work of agent ${agent.name} left uncommitted`
  const line = (agent.task ?? '').split('\n').map((l) => l.trim()).find(Boolean)
  if (!line) return who
  const chars = [...line]
  const subject = chars.length > SUBJECT_MAX ? `${chars.slice(0, SUBJECT_MAX - 3).join('').trimEnd()}...` : line
  return `${subject}\n\n${who}.`
}

/** svc's ref to the last commit of uncommitted work it wrote for the agent (a later one builds on it). */
const WORK_REF = 'refs/svc/work'

/**
 * Checks the agent is on its branch and writes a commit of what it left uncommitted (author the
 * agent, committer the user). Nothing in the agent's repository changes: its uncommitted work
 * stays uncommitted there. When the agent's tip has not moved since svc last did this, the new
 * commit builds on the last one, so landing the same agent twice does not conflict with itself.
 */
export async function workCommit(paths: AgentRepoPaths, branch: string, who: {author: Identity; committer: Identity; message: string}): Promise<WorkCommit> {
  const at = readAgentHead(paths)
  if (at.ref !== `refs/heads/${branch}`) {
    throw new WorkspaceRefusal('workspace_off_branch', `the agent's repository is not on its branch ${branch} (it is on ${at.ref ? at.ref.replace(/^refs\/heads\//, '') : 'a detached HEAD'}); check the branch out there or land the work by hand`, {branch, checkedOut: at.ref})
  }
  const {head, tree} = await snapshotTree(paths)
  let parent = head
  const prev = (await hostGitRaw(paths, ['rev-parse', '--verify', '-q', `${WORK_REF}^{commit}`])).stdout.toString('utf8').trim()
  if (prev && (await hostGitRaw(paths, ['rev-parse', '--verify', '-q', `${prev}^1`])).stdout.toString('utf8').trim() === head) parent = prev
  if (tree === (await hostGit(paths, ['rev-parse', `${parent}^{tree}`]))) return {head, commit: parent, created: parent !== head}
  const commit = await hostGit(paths, ['commit-tree', tree, '-p', parent, '-m', who.message], {env: identityEnv(who.author, who.committer)})
  await hostGit(paths, ['update-ref', WORK_REF, commit])
  return {head, commit, created: true}
}

/** The ref of svc's repository that a fetch from it takes. */
export const OUTGOING_REF = 'refs/svc/outgoing'

/**
 * Copies `commit` (from svc's repository, so from the agent's objects) into the repository at
 * `into` as `dest`: `git fetch` re-hashes and checks every object it takes, so nothing the agent
 * wrote reaches the checkout unverified. `force` lets `dest` move to an unrelated commit.
 */
export async function fetchFromAgent(paths: AgentRepoPaths, into: string, commit: string, dest: string, opts: {force?: boolean} = {}): Promise<RunResult> {
  await hostGit(paths, ['update-ref', OUTGOING_REF, commit])
  return gitRaw(['-c', 'transfer.fsckObjects=true', 'fetch', '-q', '--no-tags', '--no-write-fetch-head', paths.hostDir, `${opts.force ? '+' : ''}${OUTGOING_REF}:${dest}`], {cwd: into, timeoutMs: 300_000})
}
