import {existsSync, realpathSync} from 'node:fs'
import {resolve} from 'node:path'
import {git} from './git.js'
import {WorkspaceRefusal} from './refusal.js'

/** Where an agent works, as the Hub recorded it at dispatch (AgentWorkspace in src/api/dto.ts). */
export interface WorkspaceRef {
  path: string
  branch: string
  baseRef: string
  baseCommit: string
}

/** Where review operations run: the agent's worktree (when it still exists) and the project's checkout. */
export interface ReviewPlaces {
  /** The agent's worktree, or null once it was removed (its branch stays in the checkout). */
  worktree: string | null
  /** The checkout the worktree belongs to; null when neither the Hub nor git names one. */
  checkout: string | null
}

async function commonDir(dir: string): Promise<string> {
  return realpathSync(await git(['rev-parse', '--path-format=absolute', '--git-common-dir'], {cwd: dir}))
}

/**
 * Finds the agent's worktree and its checkout. `hint` is the project's checkout as the Hub knows
 * it (`projects.local_path`); it is trusted only when it shares the worktree's repository, else
 * the checkout is the repository's main working tree (`git worktree list`, first entry).
 */
export async function reviewPlaces(ws: WorkspaceRef, hint: string | null | undefined): Promise<ReviewPlaces> {
  const worktree = existsSync(ws.path) ? resolve(ws.path) : null
  if (!worktree) {
    if (hint && existsSync(hint)) return {worktree: null, checkout: resolve(hint)}
    throw new WorkspaceRefusal('workspace_missing', `the agent's worktree ${ws.path} no longer exists and the project has no checkout on this broker`, {path: ws.path})
  }
  const repo = await commonDir(worktree)
  if (hint && existsSync(hint) && (await commonDir(hint).catch(() => null)) === repo) return {worktree, checkout: resolve(hint)}
  const list = await git(['worktree', 'list', '--porcelain', '-z'], {cwd: worktree})
  const first = list.split('\0').find((l) => l.startsWith('worktree '))?.slice('worktree '.length) ?? null
  // A clone (no linked worktree) is its own main working tree: it has no separate checkout.
  return {worktree, checkout: first && realpathSync(first) !== realpathSync(worktree) ? first : null}
}

/** `main` -> `refs/heads/main`; a full ref stays as it is. */
export const fullRef = (ref: string) => (ref.startsWith('refs/') ? ref : `refs/heads/${ref}`)
