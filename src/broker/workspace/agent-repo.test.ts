import {appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {makeRepos, sh, write, type TestRepos} from '../../../test/helpers/git-repos.js'
import {readAgentHead, readRecord, repoMounts, writeRecord} from './agent-repo.js'
import {workspaceDiff} from './diff.js'
import {mergeWorkspace} from './merge.js'
import {removeWorkspace} from './repository.js'

const who = {agent: {id: 'agent-1', name: 'alice'}, author: {name: 'alice', email: 'agent-1@svc'}, committer: {name: 'Dana Dev', email: 'dana@example.com'}}

/**
 * What svc reads of an agent's repository on the host, against a repository the agent made
 * hostile: links to the Hub's files, rewritten alternates, a planted commondir, a ref that is
 * not a hash. Each is refused (`workspace_tampered`) or ignored, and nothing it points at leaks.
 */
describe('the host reads an agent repository it does not trust', () => {
  let repos: TestRepos
  let secret: string
  beforeEach(() => {
    repos = makeRepos()
    secret = join(repos.root, 'hub-secret')
    writeFileSync(secret, 'svc_dev_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n')
  })
  afterEach(() => repos.dispose())

  it('the agent repository is its own: branch there, objects borrowed, the checkout untouched; the record fixes the mounts', async () => {
    const ws = await repos.addAgent('own')
    expect(sh(ws.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('svc/own')
    expect(readFileSync(join(ws.paths.gitDir, 'objects', 'info', 'alternates'), 'utf8')).toBe(`${join(repos.checkout, '.git', 'objects')}\n`)
    expect(sh(repos.checkout, 'branch', '--format=%(refname:short)')).toBe('main')
    expect(repoMounts(ws.paths, readRecord(ws.paths)!)).toEqual({writable: [ws.paths.gitDir], readable: [join(repos.checkout, '.git', 'objects')]})
    // A record naming anything but a checkout's objects directory mounts nothing.
    writeRecord(ws.paths, {...readRecord(ws.paths)!, objects: join(repos.root)})
    expect(() => repoMounts(ws.paths, readRecord(ws.paths)!)).toThrow(expect.objectContaining({code: 'workspace_tampered'}))
  })

  it('a ref or HEAD that is a link to the Hub\'s files is refused, and the file\'s content never appears', async () => {
    const ws = await repos.addAgent('linked')
    const ref = join(ws.paths.gitDir, 'refs', 'heads', 'svc', 'linked')
    rmSync(ref)
    symlinkSync(secret, ref)
    const err = await workspaceDiff(ws.paths, ws).catch((e) => e)
    expect(err).toMatchObject({code: 'workspace_tampered'})
    expect(String(err.message)).not.toContain('svc_dev_')
    rmSync(ref)
    // A ref holding something other than a hash (the secret copied in) is refused too.
    writeFileSync(ref, readFileSync(secret))
    const err2 = await workspaceDiff(ws.paths, ws).catch((e) => e)
    expect(err2).toMatchObject({code: 'workspace_tampered'})
    expect(String(err2.message)).not.toContain('svc_dev_')
    // HEAD itself as a link.
    rmSync(join(ws.paths.gitDir, 'HEAD'))
    symlinkSync(secret, join(ws.paths.gitDir, 'HEAD'))
    expect(() => readAgentHead(ws.paths)).toThrow(expect.objectContaining({code: 'workspace_tampered'}))
  })

  it('rewritten alternates or a linked objects directory are refused before any git runs', async () => {
    const ws = await repos.addAgent('alt')
    appendFileSync(join(ws.paths.gitDir, 'objects', 'info', 'alternates'), `${repos.root}/elsewhere/objects\n`)
    await expect(workspaceDiff(ws.paths, ws)).rejects.toMatchObject({code: 'workspace_tampered'})
    const ws2 = await repos.addAgent('objlink')
    renameSync(join(ws2.paths.gitDir, 'objects'), join(ws2.paths.gitDir, 'objects-real'))
    symlinkSync(join(ws2.paths.gitDir, 'objects-real'), join(ws2.paths.gitDir, 'objects'))
    await expect(workspaceDiff(ws2.paths, ws2)).rejects.toMatchObject({code: 'workspace_tampered'})
  })

  it('a planted commondir, config and hooks in the agent repository change nothing svc reads or runs', async () => {
    const ws = await repos.addAgent('planted')
    write(ws.path, 'src/app.ts', 'changed\n')
    const marker = join(repos.root, 'ran')
    const evil = join(repos.root, 'evil.sh')
    writeFileSync(evil, `#!/bin/sh\ntouch ${marker}\ncat\n`, {mode: 0o755})
    // A git dir of the agent's making, with a config that runs its program.
    const forged = join(repos.root, 'forged')
    mkdirSync(forged)
    sh(forged, 'init', '-q')
    sh(forged, 'config', 'core.fsmonitor', evil)
    writeFileSync(join(ws.paths.gitDir, 'commondir'), `${join(forged, '.git')}\n`)
    appendFileSync(join(ws.paths.gitDir, 'config'), `[core]\n\tfsmonitor = ${evil}\n\thooksPath = ${repos.root}\n[diff]\n\texternal = ${evil}\n`)
    writeFileSync(join(ws.path, '.gitattributes'), '* filter=x diff=x\n')
    appendFileSync(join(ws.paths.gitDir, 'config'), `[filter "x"]\n\tclean = ${evil}\n\trequired = true\n[diff "x"]\n\ttextconv = ${evil}\n`)
    const d = await workspaceDiff(ws.paths, ws)
    expect(d.files.map((f) => f.path).sort()).toEqual(['.gitattributes', 'src/app.ts'])
    expect(d.patch).toContain('+changed')
    const merged = await mergeWorkspace({paths: ws.paths, workspace: ws, strategy: 'merge', ...who})
    expect(merged.merged).toBe(true)
    await removeWorkspace(ws.paths, ws)
    expect(() => readFileSync(marker)).toThrow()
    expect(sh(repos.checkout, 'show', 'svc/planted:src/app.ts')).toBe('changed')
  })

  it('a repository made as a worktree by an older svc is refused with workspace_legacy', async () => {
    const path = join(repos.stateDir, 'workspaces', 'old')
    mkdirSync(join(repos.stateDir, 'workspaces'), {recursive: true})
    sh(repos.checkout, 'worktree', 'add', '-q', '-b', 'svc/old', path)
    const {agentRepoPaths} = await import('./agent-repo.js')
    const paths = agentRepoPaths(repos.stateDir, 'old')
    const ws = {path, branch: 'svc/old', baseRef: 'main', baseCommit: sh(repos.checkout, 'rev-parse', 'HEAD')}
    await expect(workspaceDiff(paths, ws)).rejects.toMatchObject({code: 'workspace_legacy', message: expect.stringMatching(/Delete the agent/)})
    await expect(mergeWorkspace({paths, workspace: ws, strategy: 'merge', ...who})).rejects.toMatchObject({code: 'workspace_legacy'})
  })
})
