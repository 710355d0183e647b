import {existsSync} from 'node:fs'
import {readAgentRef, recordOrRefuse, type AgentRepoPaths} from './agent-repo.js'
import {fullRef, type WorkspaceRef} from './diff.js'
import {git, gitRaw} from './git.js'
import {fetchFromAgent, OUTGOING_REF, prepareHostRead, workCommit, workMessage} from './host-git.js'
import {personIdentity} from './person.js'
import {markPushed} from './repository.js'
import {WorkspaceRefusal, type Identity} from './refusal.js'

export interface PushRequest {
  paths: AgentRepoPaths
  workspace: WorkspaceRef
  agent: {id: string; name: string; task?: string | null}
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
 * Pushes the agent's branch to the project's remote. What the agent left uncommitted is committed
 * first (author agent, committer user), as for a merge, so the pushed branch carries all of its
 * work. With a checkout, the branch is fetched into it (objects re-hashed) and pushed from there
 * to the remote the checkout's base branch tracks, else `origin`, else its only remote; without
 * one, from svc's repository to the remote the agent was cloned from (recorded when it was made,
 * never read from the agent's config). It runs as the broker's user, so that user's own git
 * credentials apply; git never prompts (git.ts).
 */
export async function pushWorkspace(req: PushRequest): Promise<PushResult> {
  const ws = req.workspace
  const rec = recordOrRefuse(req.paths)
  await prepareHostRead(req.paths, rec)
  const checkout = rec.checkout && existsSync(rec.checkout) ? rec.checkout : null
  let remote: string | null
  let remoteUrl: string
  if (checkout) {
    const remotes = (await git(['remote'], {cwd: checkout})).split('\n').filter(Boolean)
    const tracked = (await gitRaw(['config', '--get', `branch.${ws.baseRef.replace(/^refs\/heads\//, '')}.remote`], {cwd: checkout})).stdout.toString('utf8').trim()
    remote = remotes.includes(tracked) ? tracked : remotes.includes('origin') ? 'origin' : remotes.length === 1 ? remotes[0]! : null
    if (!remote) {
      throw new WorkspaceRefusal('no_remote', remotes.length ? `the project's repository has several remotes (${remotes.join(', ')}) and none is tracked by ${ws.baseRef} or named origin` : "the project's repository has no remote to push to", {remotes})
    }
    remoteUrl = await git(['remote', 'get-url', remote], {cwd: checkout})
  } else {
    if (!rec.remote) throw new WorkspaceRefusal('no_remote', "the project's repository has no remote to push to", {remotes: []})
    remote = 'origin'
    remoteUrl = rec.remote
  }

  const ref = fullRef(ws.branch)
  let commit: string
  if (existsSync(req.paths.workdir)) commit = (await workCommit(req.paths, ws.branch, {author: req.author, committer: await personIdentity(checkout, req.committer), message: workMessage(req.agent)})).commit
  else {
    const tip = readAgentRef(req.paths, ref)
    if (!tip) throw new WorkspaceRefusal('workspace_missing', `the agent's repository has no branch ${ws.branch}`, {branch: ws.branch})
    commit = tip
  }
  let r
  if (checkout) {
    const fetched = await fetchFromAgent(req.paths, checkout, commit, ref, {force: true})
    if (fetched.code !== 0) throw new WorkspaceRefusal('workspace_tampered', `the agent's work could not be taken into the checkout (git fetch checks every object): ${fetched.stderr.trim()}`, {branch: ws.branch})
    r = await gitRaw(['push', '--porcelain', remote, `${ref}:${ref}`], {cwd: checkout, timeoutMs: 180_000})
  } else {
    await git(['update-ref', OUTGOING_REF, commit], {cwd: req.paths.hostDir, untrusted: true, env: {GIT_DIR: req.paths.hostDir}})
    // svc's own repository, as the user (their credentials): its config is svc's.
    r = await gitRaw(['push', '--porcelain', remoteUrl, `${OUTGOING_REF}:${ref}`], {cwd: req.paths.hostDir, timeoutMs: 180_000})
  }
  if (r.code !== 0) {
    const out = `${r.stdout.toString('utf8')}\n${r.stderr}`.trim()
    // `--porcelain` marks a ref the remote refused with "!" (non-fast-forward, hook, protection).
    const rejected = /^!\t/m.test(r.stdout.toString('utf8'))
    throw new WorkspaceRefusal(rejected ? 'push_rejected' : 'push_failed', `git push to ${remote} ${rejected ? 'was rejected' : 'failed'}: ${r.stderr || out}`, {remote, remoteUrl, output: out.slice(-4000)})
  }
  await markPushed(req.paths, commit)
  return {pushed: true, remote, remoteUrl, branch: ws.branch, commit, url: branchWebUrl(remoteUrl, ws.branch) ?? remoteUrl}
}
