import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {makeRepos, sh, write, type TestRepos} from '../../../test/helpers/git-repos.js'
import {branchWebUrl, pushWorkspace} from './push.js'

const who = {agent: {id: 'agent-1', name: 'alice'}, author: {name: 'alice', email: 'agent-1@svc'}, committer: {name: 'Developer', email: 'dev@localhost'}}

describe('pushWorkspace: the agent branch to the project remote', () => {
  let repos: TestRepos
  beforeEach(() => (repos = makeRepos()))
  afterEach(() => repos.dispose())

  it('pushes the branch (uncommitted work committed first) to the remote main tracks, answering its URL', async () => {
    const ws = await repos.addAgent('pusher')
    write(ws.path, 'src/new.ts', 'new\n')
    const res = await pushWorkspace({paths: ws.paths, workspace: ws, ...who})
    const agentHead = sh(ws.path, 'rev-parse', 'HEAD')
    expect(res).toMatchObject({pushed: true, remote: 'origin', remoteUrl: repos.remote, branch: 'svc/pusher', url: repos.remote})
    // The work commit sits on the agent's tip; the agent's own repository is left as it was.
    expect(sh(repos.remote, 'rev-parse', `${res.commit}^`)).toBe(agentHead)
    expect(sh(ws.path, 'status', '--porcelain')).toBe('?? src/new.ts')
    // The checkout has the pushed branch too.
    expect(sh(repos.checkout, 'rev-parse', 'refs/heads/svc/pusher')).toBe(res.commit)
    expect(sh(repos.remote, 'rev-parse', 'refs/heads/svc/pusher')).toBe(res.commit)
    expect(sh(repos.remote, 'show', `${res.commit}:src/new.ts`)).toBe('new')
    expect(sh(repos.remote, 'log', '-1', '--format=%an|%cn', res.commit)).toBe('alice|Dev')
  })

  it('a rejected push (the remote branch has other history) is push_rejected; no remote is no_remote', async () => {
    const ws = await repos.addAgent('rejected')
    write(ws.path, 'a.txt', 'a\n')
    sh(repos.checkout, 'push', '-q', 'origin', 'main:refs/heads/svc/rejected')
    sh(repos.checkout, 'commit', '-q', '--allow-empty', '-m', 'diverge')
    sh(repos.checkout, 'push', '-q', '-f', 'origin', 'main:refs/heads/svc/rejected')
    await expect(pushWorkspace({paths: ws.paths, workspace: ws, ...who})).rejects.toMatchObject({code: 'push_rejected', details: {remote: 'origin'}})
    sh(repos.checkout, 'remote', 'remove', 'origin')
    await expect(pushWorkspace({paths: ws.paths, workspace: ws, ...who})).rejects.toMatchObject({code: 'no_remote'})
  })

  it('web URLs of branches on known hosts', () => {
    expect(branchWebUrl('git@github.com:acme/app.git', 'svc/x')).toBe('https://github.com/acme/app/tree/svc/x')
    expect(branchWebUrl('https://github.com/acme/app', 'svc/x')).toBe('https://github.com/acme/app/tree/svc/x')
    expect(branchWebUrl('https://gitlab.com/g/sub/app.git', 'svc/x')).toBe('https://gitlab.com/g/sub/app/-/tree/svc/x')
    expect(branchWebUrl('/srv/git/app.git', 'svc/x')).toBeNull()
  })
})
