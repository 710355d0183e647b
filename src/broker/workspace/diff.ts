import {existsSync} from 'node:fs'
import type {AgentDiffDto} from '../../api/dto.js'
import {readAgentRef, recordOrRefuse, type AgentRepoPaths} from './agent-repo.js'
import {cutPatch, parseRawNumstat, type DiffFile} from './diff-parse.js'
import {GitError} from './git.js'
import {hostGit, hostGitRaw, prepareHostRead, snapshotTree} from './host-git.js'
import {WorkspaceRefusal} from './refusal.js'

export type {DiffFile}

/** Where an agent works, as the Hub recorded it at dispatch (AgentWorkspace in src/api/dto.ts). */
export interface WorkspaceRef {
  path: string
  branch: string
  baseRef: string
  baseCommit: string
}

/** What `GET /api/v1/agents/:id/diff` answers, built here on the agent's broker. */
export type WorkspaceDiff = AgentDiffDto

export const DEFAULT_DIFF_BYTES = 1024 * 1024

/**
 * Everything in the agent's work tree that differs from its base commit: committed or not,
 * untracked files included, ignored files not (host-git.ts snapshotTree). Once the work tree is
 * gone, the branch tip in its repository. Binary files are listed with `binary: true` and not
 * dumped; renames are detected (`-M`). All git runs in svc's own repository, hardened.
 */
export async function workspaceDiff(paths: AgentRepoPaths, ws: WorkspaceRef, opts: {maxBytes?: number; stat?: boolean} = {}): Promise<WorkspaceDiff> {
  await prepareHostRead(paths, recordOrRefuse(paths))
  const maxBytes = opts.maxBytes ?? DEFAULT_DIFF_BYTES
  let commit: string
  let tree: string
  if (existsSync(paths.workdir)) ({head: commit, tree} = await snapshotTree(paths))
  else {
    const tip = readAgentRef(paths, `refs/heads/${ws.branch}`)
    if (!tip) throw new WorkspaceRefusal('workspace_missing', `the agent's work tree is gone and its repository has no branch ${ws.branch}`, {path: ws.path, branch: ws.branch})
    commit = tip
    tree = await hostGit(paths, ['rev-parse', `${commit}^{tree}`])
  }
  const range = [ws.baseCommit, tree]
  const [raw, patch] = await Promise.all([
    hostGit(paths, ['diff-tree', '-r', '-z', '-M', '--raw', '--numstat', ...range], {timeoutMs: 120_000}),
    // One byte more than the cap tells a cut patch from one of exactly maxBytes.
    opts.stat ? Promise.resolve(null) : patchOf(paths, range, maxBytes + 1),
  ])
  const cut = patch ? cutPatch(patch, maxBytes) : Buffer.alloc(0)
  return {
    base: {ref: ws.baseRef, commit: ws.baseCommit},
    head: {branch: ws.branch, commit},
    files: parseRawNumstat(raw),
    patch: cut.toString('utf8'),
    truncated: !!patch && cut.length < patch.length,
  }
}

async function patchOf(paths: AgentRepoPaths, range: string[], limit: number): Promise<Buffer> {
  const r = await hostGitRaw(paths, ['diff-tree', '-r', '-M', '-p', '--no-color', '--no-ext-diff', '--no-textconv', ...range], {timeoutMs: 120_000, maxStdoutBytes: limit})
  if (r.code !== 0 && !r.truncated) throw new GitError(`git diff-tree failed: ${r.stderr}`, r)
  return r.stdout
}

/** `main` -> `refs/heads/main`; a full ref stays as it is. */
export const fullRef = (ref: string) => (ref.startsWith('refs/') ? ref : `refs/heads/${ref}`)
