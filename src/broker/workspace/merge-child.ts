/**
 * Teams: a parent agent takes its child's work into its own branch and work tree. Everything is
 * decided in svc's repositories first (the child's work as a commit, the merge computed, every
 * refusal), then the parent's repository is changed only from inside the parent's own sandbox:
 * the merge commit goes into the parent's HOME as a git bundle (a new file, never written through
 * a link) and the parent's git fetches it and fast-forwards. The host never runs git in, or
 * writes files into, a repository or work tree an agent can write.
 */
import {closeSync, constants, lstatSync, mkdtempSync, openSync, readFileSync, rmSync, unlinkSync, writeSync} from 'node:fs'
import {randomBytes} from 'node:crypto'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import type {MergeResultDto as MergeResult} from '../../api/dto.js'
import type {RunResult} from '../runtimes/run-command.js'
import {readAgentHead, readAgentRef, recordOrRefuse, type AgentRepoPaths} from './agent-repo.js'
import {fullRef, type WorkspaceRef} from './diff.js'
import {GitError} from './git.js'
import {fetchFromAgent, hostGit, hostGitRaw, prepareHostRead, snapshotTree, workCommit} from './host-git.js'
import {identityEnv, WorkspaceRefusal, type Identity} from './refusal.js'

export interface ChildMergeRequest {
  parent: {paths: AgentRepoPaths; workspace: WorkspaceRef; home: string; identity: Identity}
  child: {paths: AgentRepoPaths; workspace: WorkspaceRef; identity: Identity; name: string}
  strategy: 'merge' | 'squash'
  message?: string
  /** Runs a command inside the parent's sandbox or container (Runtime.exec). */
  runInParent(argv: string[]): Promise<RunResult>
}

const nul = (s: string) => s.split('\0').filter(Boolean)

export async function mergeChild(req: ChildMergeRequest): Promise<MergeResult> {
  const {parent, child} = req
  const pbranch = parent.workspace.branch
  await prepareHostRead(parent.paths, recordOrRefuse(parent.paths))
  await prepareHostRead(child.paths, recordOrRefuse(child.paths))
  const at = readAgentHead(parent.paths)
  if (at.ref !== fullRef(pbranch) || !at.commit) {
    throw new WorkspaceRefusal('workspace_off_branch', `the parent's repository is not on its branch ${pbranch}; check it out there and merge again`, {branch: pbranch, checkedOut: at.ref})
  }
  const head = at.commit
  const work = await workCommit(child.paths, child.workspace.branch, {author: child.identity, committer: parent.identity, message: `Work of agent ${child.name} left uncommitted`})
  // The child's work, re-hashed, into svc's repository of the parent.
  const into = `refs/svc/child/${child.paths.agentId}`
  const fetched = await fetchFromAgent(child.paths, parent.paths.hostDir, work.commit, into, {force: true})
  if (fetched.code !== 0) throw new WorkspaceRefusal('workspace_tampered', `the child's work could not be taken (git fetch checks every object): ${fetched.stderr.trim()}`)
  const inParent = (args: string[], env?: Record<string, string>) => hostGit(parent.paths, args, {env, timeoutMs: 120_000})
  if ((await hostGitRaw(parent.paths, ['merge-base', '--is-ancestor', work.commit, head])).code === 0) {
    throw new WorkspaceRefusal('nothing_to_merge', `${pbranch} already contains everything on ${child.workspace.branch}`, {baseRef: pbranch, branch: child.workspace.branch})
  }
  const mt = await hostGitRaw(parent.paths, ['merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', head, work.commit], {timeoutMs: 120_000})
  const [tree, ...conflicted] = nul(mt.stdout.toString('utf8'))
  if (mt.code === 1) {
    const files = [...new Set(conflicted)]
    throw new WorkspaceRefusal('merge_conflict', `merging ${child.workspace.branch} into ${pbranch} conflicts in ${files.length} file(s): ${files.slice(0, 5).join(', ')}${files.length > 5 ? ', ...' : ''}`, {files, baseRef: pbranch, branch: child.workspace.branch})
  }
  if (mt.code !== 0) throw new GitError(`git merge-tree failed: ${mt.stderr}`, mt)
  if (tree === (await inParent(['rev-parse', `${head}^{tree}`]))) {
    throw new WorkspaceRefusal('nothing_to_merge', `${pbranch} already has every change on ${child.workspace.branch}`, {baseRef: pbranch, branch: child.workspace.branch})
  }
  const written = nul(await inParent(['diff-tree', '-r', '-z', '--no-renames', '--name-only', head, tree]))
  // The parent's uncommitted changes to a file the merge writes: refused, as for a person's merge.
  const now = (await snapshotTree(parent.paths)).tree
  const dirty = new Set(nul(await inParent(['diff-tree', '-r', '-z', '--no-renames', '--name-only', head, now])))
  const clash = written.filter((f) => dirty.has(f))
  if (clash.length) {
    throw new WorkspaceRefusal('checkout_dirty', `the parent has uncommitted changes to ${clash.length} file(s) the merge would write: ${clash.slice(0, 5).join(', ')}${clash.length > 5 ? ', ...' : ''}; it commits or stashes them first`, {files: clash})
  }
  const message = req.message?.trim() || (req.strategy === 'squash' ? `${child.name}: work from ${child.workspace.branch}` : `Merge branch '${child.workspace.branch}' of agent ${child.name}`)
  const parents = req.strategy === 'squash' ? ['-p', head] : ['-p', head, '-p', work.commit]
  const merged = await inParent(['commit-tree', tree, ...parents, '-m', message], identityEnv(parent.identity, parent.identity))
  await inParent(['update-ref', 'refs/svc/merged', merged])
  await deliver(req, head, merged)
  const landed = readAgentRef(parent.paths, fullRef(pbranch))
  if (landed !== merged) throw new WorkspaceRefusal('conflict', `the parent's branch ${pbranch} moved while its child's work was being merged; merge again`, {branch: pbranch})
  return {merged: true, commit: merged, strategy: req.strategy, baseRef: pbranch, branch: child.workspace.branch, files: written}
}

/**
 * Hands the merge commit to the parent's own git: a bundle of what the parent lacks, written as a
 * new file in its HOME (O_EXCL, O_NOFOLLOW: a link planted there is not followed), fetched and
 * fast-forwarded inside its sandbox. A fast-forward refuses to overwrite local changes, so a
 * parent that changed a file meanwhile keeps it and the merge answers `conflict`.
 */
async function deliver(req: ChildMergeRequest, head: string, merged: string): Promise<void> {
  const {parent} = req
  const tmp = mkdtempSync(join(tmpdir(), 'svc-bundle-'))
  const name = `.svc-merge-${randomBytes(8).toString('hex')}.bundle`
  const target = join(parent.home, name)
  try {
    await hostGit(parent.paths, ['bundle', 'create', '-q', join(tmp, 'b'), 'refs/svc/merged', `^${head}`])
    if (!lstatSync(parent.home).isDirectory()) throw new WorkspaceRefusal('workspace_tampered', "the parent's HOME is not a directory")
    const fd = openSync(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644)
    try {
      writeSync(fd, readFileSync(join(tmp, 'b')))
    } finally {
      closeSync(fd)
    }
    const wd = parent.workspace.path
    const fetch = await req.runInParent(['git', '-C', wd, 'fetch', '-q', '--no-tags', target, `refs/svc/merged`])
    if (fetch.code !== 0) throw new WorkspaceRefusal('conflict', `the parent's git could not take the merge: ${fetch.stderr.trim()}`, {branch: parent.workspace.branch})
    const ff = await req.runInParent(['git', '-C', wd, 'merge', '-q', '--ff-only', merged])
    if (ff.code !== 0) throw new WorkspaceRefusal('conflict', `the parent's work tree could not move to the merge (it changed meanwhile?): ${ff.stderr.trim()}`, {branch: parent.workspace.branch})
  } finally {
    rmSync(tmp, {recursive: true, force: true})
    try {
      unlinkSync(target)
    } catch {
      // Not made, or the parent removed it.
    }
  }
}
