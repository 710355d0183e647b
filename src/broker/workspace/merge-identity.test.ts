import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {makeRepos, sh, write, type TestRepos} from '../../../test/helpers/git-repos.js'
import {workMessage} from './host-git.js'
import {mergeWorkspace, type MergeRequest} from './merge.js'
import {pushWorkspace} from './push.js'

/** What the Hub sends: the agent, and the person as the Hub knows them (the dev user on a workstation). */
const hub = {author: {name: 'alice', email: 'agent-1@svc'}, committer: {name: 'Developer', email: 'dev@localhost'}}
const TASK = 'Add a parser for the config files\nwith tests, and keep the old reader'

describe('landing work: who the commits name, and the message of the uncommitted work', () => {
  let repos: TestRepos
  beforeEach(() => {
    repos = makeRepos()
    sh(repos.checkout, 'config', 'user.name', 'Pat Person')
    sh(repos.checkout, 'config', 'user.email', 'pat@example.com')
  })
  afterEach(() => repos.dispose())

  async function agentWork(slug: string) {
    const ws = await repos.addAgent(slug)
    // The agent's own repository names someone else: it is the agent's to write, never read.
    sh(ws.path, 'config', 'user.name', 'Mallory')
    sh(ws.path, 'config', 'user.email', 'mallory@evil.example')
    write(ws.path, 'src/app.ts', 'export const a = 1\nexport const b = 2\nexport const c = 30\n')
    sh(ws.path, 'commit', '-qam', 'agent: c is 30')
    write(ws.path, 'src/added.ts', 'export const added = 1\n')
    return ws
  }
  const req = (ws: Awaited<ReturnType<typeof agentWork>>, extra: Partial<MergeRequest> = {}): MergeRequest => ({paths: ws.paths, workspace: ws, strategy: 'merge', agent: {id: 'agent-1', name: 'alice', task: TASK}, ...hub, ...extra})

  it("a merge commit is the person's (the checkout's user.name/user.email), not the Hub's; the uncommitted work is the agent's, its task the message", async () => {
    const ws = await agentWork('mg')
    await mergeWorkspace(req(ws))
    expect(sh(repos.checkout, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', 'main')).toBe('Pat Person <pat@example.com>|Pat Person <pat@example.com>')
    expect(sh(repos.checkout, 'log', '-1', '--format=%an <%ae>|%cn <%ce>|%s', 'svc/mg')).toBe('alice <agent-1@svc>|Pat Person <pat@example.com>|Add a parser for the config files')
    expect(sh(repos.checkout, 'log', '-1', '--format=%b', 'svc/mg')).toBe('Work of agent alice left uncommitted.\n')
    expect(sh(repos.checkout, 'log', '--format=%an%n%cn', 'main')).not.toContain('Mallory')
  })

  it('squash: author the agent, committer the person', async () => {
    const ws = await agentWork('sq')
    await mergeWorkspace(req(ws, {strategy: 'squash'}))
    expect(sh(repos.checkout, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', 'main')).toBe('alice <agent-1@svc>|Pat Person <pat@example.com>')
  })

  it("a checkout whose git names nobody: the person's Hub identity, whole", async () => {
    const saved = {g: process.env.GIT_CONFIG_GLOBAL, s: process.env.GIT_CONFIG_NOSYSTEM}
    process.env.GIT_CONFIG_GLOBAL = '/dev/null'
    process.env.GIT_CONFIG_NOSYSTEM = '1'
    try {
      sh(repos.checkout, 'config', '--unset', 'user.email')
      const ws = await agentWork('fb')
      await mergeWorkspace(req(ws))
      expect(sh(repos.checkout, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', 'main')).toBe('Developer <dev@localhost>|Developer <dev@localhost>')
    } finally {
      for (const [k, v] of [['GIT_CONFIG_GLOBAL', saved.g], ['GIT_CONFIG_NOSYSTEM', saved.s]] as const) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
    }
  })

  it("push commits the uncommitted work the same way (the agent's, the task as message, the person committing)", async () => {
    const ws = await agentWork('ps')
    const r = await pushWorkspace({paths: ws.paths, workspace: ws, agent: {id: 'agent-1', name: 'alice', task: TASK}, ...hub})
    expect(sh(repos.remote, 'log', '-1', '--format=%an|%cn <%ce>|%s', r.commit)).toBe('alice|Pat Person <pat@example.com>|Add a parser for the config files')
  })

  it('the message: the first non-blank line of the task, cut to 72 characters; no task, who left it', () => {
    expect(workMessage({name: 'bob', task: '\n  Fix the flaky test  \nmore'})).toBe('Fix the flaky test\n\nWork of agent bob left uncommitted.')
    const long = workMessage({name: 'bob', task: 'x'.repeat(100)}).split('\n')[0]!
    expect(long).toBe(`${'x'.repeat(69)}...`)
    expect(workMessage({name: 'bob', task: null})).toBe('Work of agent bob left uncommitted')
    expect(workMessage({name: 'bob', task: '  \n '})).toBe('Work of agent bob left uncommitted')
  })
})
