import {execFileSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliEnv, runCli} from '../helpers/cli.js'
import {makeRepos, sh, type TestRepos} from '../helpers/git-repos.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'

/**
 * Issue 30 item 12: `svc project register` run in a checkout writes its link
 * (`.svc/settings.yaml`) there and keeps `git status` clean through `<git-common-dir>/info/exclude`,
 * never through the user's `.gitignore`; a second register adds nothing.
 */
describe('svc project register keeps git status clean', {timeout: 120_000}, () => {
  let hub: LiveHub
  let repos: TestRepos
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-exclude-'))
  let env: NodeJS.ProcessEnv
  const exclude = () => readFileSync(join(repos.checkout, '.git', 'info', 'exclude'), 'utf8')

  beforeAll(async () => {
    hub = await startLiveHub('sqlite', {broker: false})
    repos = makeRepos()
    env = cliEnv(home, {SVC_HUB_ENDPOINT: hub.url, SVC_DEV_TOKEN: hub.devToken})
  }, 60_000)
  afterAll(async () => {
    await hub?.dispose()
    repos?.dispose()
    rmSync(home, {recursive: true, force: true})
  })

  it('links the checkout, and its link file is excluded in .git/info/exclude once, however often it runs', async () => {
    expect(sh(repos.checkout, 'status', '--porcelain')).toBe('')
    const r = await runCli(['project', 'register', 'excluded', '--json'], {env, cwd: repos.checkout, timeoutMs: 60_000})
    expect(r.code, r.stdout + r.stderr).toBe(0)
    // The control: the link was written into the checkout, so without the exclude git would show it.
    expect(r.json.linked).toBe(join(repos.checkout, '.svc', 'settings.yaml'))
    expect(readFileSync(r.json.linked, 'utf8')).toContain(r.json.project.id)
    expect(sh(repos.checkout, 'status', '--porcelain', '--untracked-files=all')).toBe('')
    expect(sh(repos.checkout, 'status', '--porcelain', '--untracked-files=all', '--ignored')).toContain('.svc/')
    expect(exclude().match(/^\/\.svc\/settings\.yaml$/gm)).toHaveLength(1)
    expect(existsSync(join(repos.checkout, '.gitignore')) ? readFileSync(join(repos.checkout, '.gitignore'), 'utf8') : '').not.toContain('.svc')

    const again = await runCli(['project', 'register', 'excluded', '--json'], {env, cwd: repos.checkout, timeoutMs: 60_000})
    expect(again.code, again.stderr).toBe(0)
    expect(exclude().match(/^\/\.svc\/settings\.yaml$/gm)).toHaveLength(1)
    expect(sh(repos.checkout, 'status', '--porcelain', '--untracked-files=all')).toBe('')
  })

  it('in a linked worktree the line goes to the common git directory, and a new .svc/setup still shows', async () => {
    const wt = join(repos.root, 'wt')
    sh(repos.checkout, 'worktree', 'add', '-q', '-b', 'side', wt)
    const r = await runCli(['project', 'register', 'excluded', '--json'], {env, cwd: wt, timeoutMs: 60_000})
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(sh(wt, 'status', '--porcelain', '--untracked-files=all')).toBe('')
    expect(exclude().match(/^\/\.svc\/settings\.yaml$/gm)).toHaveLength(1)
    // A project's committed setup script is not hidden by the exclude.
    execFileSync('sh', ['-c', `printf '#!/bin/sh\\n' > ${JSON.stringify(join(wt, '.svc', 'setup'))}`])
    expect(sh(wt, 'status', '--porcelain', '--untracked-files=all')).toBe('?? .svc/setup')
  })
})
