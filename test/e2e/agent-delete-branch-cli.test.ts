import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {cliEnv, runCli} from '../helpers/cli.js'
import {makeRepos, sh, write, type TestRepos} from '../helpers/git-repos.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'

const normalise = (text: string) => text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>').replace(/\b[0-9a-f]{12}\b/g, '<sha>')

/**
 * `svc agent merge` then `svc agent delete --branch` with the real CLI (issue 30, item 7): the
 * merge is the checkout's person, the merged branch goes with the agent; an unmerged one is kept
 * and the output says why.
 */
describe('svc agent delete --branch', {timeout: 180_000}, () => {
  let hub: LiveHub
  let repos: TestRepos
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-delete-branch-'))
  let env: NodeJS.ProcessEnv
  const svc = (...args: string[]) => runCli(args, {env, timeoutMs: 60_000})

  /** An agent made through the API (dispatch makes its repository from the checkout), with one commit. */
  async function agentWithCommit(name: string, file: string) {
    const project = (await hub.request('GET', '/api/v1/projects/default')).body.project
    await hub.store.projects.update(project.id, {localPath: repos.checkout}, iso(new Date()))
    const r = await hub.request('POST', '/api/v1/agents', {body: {name, projectId: project.id, harnessConfig: 'shell', task: `Write ${file}`}})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    const path = r.body.agent.workspace.path
    write(path, file, `by ${name}\n`)
    sh(path, 'add', '-A')
    sh(path, 'commit', '-qm', `${name}: ${file}`)
    return path
  }

  beforeAll(async () => {
    hub = await startLiveHub('sqlite')
    repos = makeRepos()
    env = cliEnv(home, {SVC_HUB_ENDPOINT: hub.url, SVC_DEV_TOKEN: hub.devToken})
  })
  afterAll(async () => {
    await hub?.dispose()
    repos?.dispose()
    rmSync(home, {recursive: true, force: true})
  })

  it('merged: svc agent merge (a merge commit by the checkout\'s person), then delete --branch removes svc/<name> from the checkout', async () => {
    await agentWithCommit('alice', 'docs/alice.md')
    const merged = await svc('agent', 'merge', 'alice')
    expect(merged.code, merged.stderr).toBe(0)
    expect(normalise(merged.stdout)).toBe('Merged svc/alice into main: <sha> (1 file)\n')
    expect(sh(repos.checkout, 'log', '-1', '--format=%an <%ae>|%P', 'main')).toMatch(/^Dev <dev@example\.com>\|\S+ \S+$/)
    expect(sh(repos.checkout, 'branch', '--list', 'svc/alice')).not.toBe('')
    const r = await svc('agent', 'delete', 'alice', '--branch')
    expect(r.code, r.stderr).toBe(0)
    expect(normalise(r.stdout)).toBe('Deleted agent alice (<id>).\nDeleted its branch svc/alice (merged).\n')
    expect(sh(repos.checkout, 'branch', '--list', 'svc/alice')).toBe('')
    expect(sh(repos.checkout, 'show', 'main:docs/alice.md')).toBe('by alice')
  })

  it('not merged: the agent goes, the branch is kept in the checkout, the output says why; --json carries it', async () => {
    const path = await agentWithCommit('bob', 'docs/bob.md')
    const tip = sh(path, 'rev-parse', 'HEAD')
    const r = await svc('agent', 'delete', 'bob', '--branch')
    expect(r.code, r.stderr).toBe(0)
    expect(normalise(r.stdout)).toBe('Deleted agent bob (<id>).\nKept its branch svc/bob: it is not merged into main; merge it (svc agent merge) or delete the branch by hand (git branch -D svc/bob).\n')
    expect(sh(repos.checkout, 'rev-parse', 'svc/bob')).toBe(tip)
    await agentWithCommit('carol', 'docs/carol.md')
    const json = await svc('agent', 'delete', 'carol', '--branch', '--json')
    expect(json.code, json.stderr).toBe(0)
    expect(json.json).toMatchObject({agent: {name: 'carol'}, branch: {name: 'svc/carol', deleted: false}})
  })

  it('control: a plain delete keeps a merged branch', async () => {
    await agentWithCommit('dave', 'docs/dave.md')
    expect((await svc('agent', 'merge', 'dave')).code).toBe(0)
    const r = await svc('agent', 'delete', 'dave')
    expect(r.code, r.stderr).toBe(0)
    expect(normalise(r.stdout)).toBe('Deleted agent dave (<id>).\n')
    expect(sh(repos.checkout, 'branch', '--list', 'svc/dave')).not.toBe('')
  })
})
