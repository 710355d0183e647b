import type {AgentDiffDto} from '../../api/dto.js'
import {git, GitError, gitRaw} from './git.js'
import {fullRef, reviewPlaces, type WorkspaceRef} from './checkout.js'
import {cutPatch, parseRawNumstat, type DiffFile} from './diff-parse.js'
import {snapshotTree} from './snapshot.js'

export type {DiffFile}

/** What `GET /api/v1/agents/:id/diff` answers, built here on the agent's broker. */
export type WorkspaceDiff = AgentDiffDto

export const DEFAULT_DIFF_BYTES = 1024 * 1024

/**
 * Everything in the agent's worktree that differs from its base commit: committed or not,
 * untracked files included, ignored files not (a snapshot tree through a temporary index, see
 * snapshot.ts). Once the worktree is gone, the branch tip in the checkout. Binary files are
 * listed with `binary: true` and not dumped; renames are detected (`-M`).
 */
export async function workspaceDiff(ws: WorkspaceRef, opts: {checkout?: string | null; maxBytes?: number; stat?: boolean} = {}): Promise<WorkspaceDiff> {
  const places = await reviewPlaces(ws, opts.checkout)
  const maxBytes = opts.maxBytes ?? DEFAULT_DIFF_BYTES
  let cwd: string
  let commit: string
  let tree: string
  if (places.worktree) {
    cwd = places.worktree
    ;({head: commit, tree} = await snapshotTree(cwd))
  } else {
    cwd = places.checkout!
    commit = await git(['rev-parse', '--verify', `${fullRef(ws.branch)}^{commit}`], {cwd})
    tree = await git(['rev-parse', `${commit}^{tree}`], {cwd})
  }
  const range = [ws.baseCommit, tree]
  const [raw, patch] = await Promise.all([
    git(['diff-tree', '-r', '-z', '-M', '--raw', '--numstat', ...range], {cwd, timeoutMs: 120_000}),
    // One byte more than the cap tells a cut patch from one of exactly maxBytes.
    opts.stat ? Promise.resolve(null) : patchOf(cwd, range, maxBytes + 1),
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

async function patchOf(cwd: string, range: string[], limit: number): Promise<Buffer> {
  const r = await gitRaw(['diff-tree', '-r', '-M', '-p', '--no-color', '--no-ext-diff', '--no-textconv', ...range], {cwd, timeoutMs: 120_000, maxStdoutBytes: limit})
  if (r.code !== 0 && !r.truncated) throw new GitError(`git diff-tree failed: ${r.stderr}`, r)
  return r.stdout
}
