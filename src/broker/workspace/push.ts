import {git, gitRaw} from './git.js'
import {fullRef, reviewPlaces, type WorkspaceRef} from './checkout.js'
import {WorkspaceRefusal, type Identity} from './refusal.js'
import {landWorkCommit, workCommit} from './snapshot.js'

export interface PushRequest {
  workspace: WorkspaceRef
  checkout?: string | null
  agent: {id: string; name: string}
  author: Identity
  committer: Identity
}

import type {PushResultDto as PushResult} from '../../api/dto.js'

export type {PushResult}

/** The web page of a branch on GitHub, GitLab or Bitbucket, from an ssh or https remote URL. */
export function branchWebUrl(remoteUrl: string, branch: string): string | null {
  const m = /^(?:https?:\/\/(?:[^@/]+@)?|ssh:\/\/git@|git@)(github\.com|gitlab\.com|bitbucket\.org)[:/](.+?)(?:\.git)?\/?$/.exec(remoteUrl)
  if (!m) return null
  const path = m[1] === 'bitbucket.org' ? 'src' : m[1] === 'gitlab.com' ? '-/tree' : 'tree'
  return `https://${m[1]}/${m[2]}/${path}/${branch.split('/').map(encodeURIComponent).join('/')}`
}

/**
 * Pushes the agent's branch to the project's remote: the remote the checkout's base branch
 * tracks, else `origin`, else the only remote. It runs as the broker's user, so that user's own
 * git credentials (ssh agent, credential helper) apply; git never prompts (git.ts). What the
 * agent left uncommitted is committed first (author agent, committer user), as for a merge, so
 * the pushed branch carries all of its work.
 */
export async function pushWorkspace(req: PushRequest): Promise<PushResult> {
  const ws = req.workspace
  const {worktree, checkout} = await reviewPlaces(ws, req.checkout)
  const repo = worktree ?? checkout!
  const remotes = (await git(['remote'], {cwd: repo})).split('\n').filter(Boolean)
  const tracked = (await gitRaw(['config', '--get', `branch.${ws.baseRef.replace(/^refs\/heads\//, '')}.remote`], {cwd: repo})).stdout.toString('utf8').trim()
  const remote = remotes.includes(tracked) ? tracked : remotes.includes('origin') ? 'origin' : remotes.length === 1 ? remotes[0] : null
  if (!remote) {
    throw new WorkspaceRefusal('no_remote', remotes.length ? `the project's repository has several remotes (${remotes.join(', ')}) and none is tracked by ${ws.baseRef} or named origin` : 'the project\'s repository has no remote to push to', {remotes})
  }
  const remoteUrl = await git(['remote', 'get-url', remote], {cwd: repo})

  if (worktree) {
    const work = await workCommit(worktree, ws.branch, {author: req.author, committer: req.committer, message: `Work of agent ${req.agent.name} left uncommitted`})
    await landWorkCommit(worktree, ws.branch, work)
  }
  const ref = fullRef(ws.branch)
  const commit = await git(['rev-parse', '--verify', `${ref}^{commit}`], {cwd: repo})
  const r = await gitRaw(['push', '--porcelain', remote, `${ref}:${ref}`], {cwd: repo, timeoutMs: 180_000})
  if (r.code !== 0) {
    const out = `${r.stdout.toString('utf8')}\n${r.stderr}`.trim()
    // `--porcelain` marks a ref the remote refused with "!" (non-fast-forward, hook, protection).
    const rejected = /^!\t/m.test(r.stdout.toString('utf8'))
    throw new WorkspaceRefusal(rejected ? 'push_rejected' : 'push_failed', `git push to ${remote} ${rejected ? 'was rejected' : 'failed'}: ${r.stderr || out}`, {remote, remoteUrl, output: out.slice(-4000)})
  }
  return {pushed: true, remote, remoteUrl, branch: ws.branch, commit, url: branchWebUrl(remoteUrl, ws.branch) ?? remoteUrl}
}
