import {chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {makeRepos, sh, type TestRepos} from '../../../test/helpers/git-repos.js'
import {gitRaw} from './git.js'

/**
 * git's ssh is a program that records the arguments it was given and fails: real git decides
 * whether and how to call it, and the test sees what ssh would have been asked to do.
 */
describe('git runs ssh in batch mode: never a prompt on the broker terminal', () => {
  let repos: TestRepos
  let dir: string
  let ssh: string
  const calls = () => readFileSync(join(dir, 'calls'), 'utf8')
  beforeEach(() => {
    repos = makeRepos()
    dir = mkdtempSync(join(tmpdir(), 'svc-ssh-'))
    // Named ssh, so git passes OpenSSH options to it without probing.
    ssh = join(dir, 'ssh')
    writeFileSync(ssh, `#!/bin/sh\necho "$*" >> '${join(dir, 'calls')}'\nexit 255\n`)
    chmodSync(ssh, 0o755)
  })
  afterEach(() => {
    repos.dispose()
    rmSync(dir, {recursive: true, force: true})
  })

  it('with nothing configured, ssh (from PATH) is run with BatchMode=yes', async () => {
    const r = await gitRaw(['ls-remote', 'git@example.invalid:repo.git'], {cwd: repos.checkout, env: {PATH: `${dir}:${process.env.PATH}`}})
    expect(r.code).not.toBe(0)
    expect(calls()).toMatch(/^-o BatchMode=yes .*example\.invalid/m)
  })

  it('a GIT_SSH_COMMAND already set keeps its own options and gets BatchMode=yes after them', async () => {
    const r = await gitRaw(['ls-remote', 'ssh://git@example.invalid/repo.git'], {cwd: repos.checkout, env: {GIT_SSH_COMMAND: `${ssh} -i /keys/deploy`}})
    expect(r.code).not.toBe(0)
    expect(calls()).toMatch(/^-i \/keys\/deploy -o BatchMode=yes .*example\.invalid/m)
  })

  it("the repository's core.sshCommand is the command used (with BatchMode=yes), not replaced by plain ssh", async () => {
    sh(repos.checkout, 'config', 'core.sshCommand', `${ssh} -i /keys/project`)
    const r = await gitRaw(['fetch', 'ssh://git@example.invalid/repo.git'], {cwd: repos.checkout})
    expect(r.code).not.toBe(0)
    expect(calls()).toMatch(/^-i \/keys\/project -o BatchMode=yes .*example\.invalid/m)
  })

  it('a command that talks to no remote gets no ssh command of svc\'s (a user\'s core.sshCommand stays in charge)', async () => {
    const seen = join(dir, 'env')
    const r = await gitRaw(['-c', `alias.envdump=!env > '${seen}'`, 'envdump'], {cwd: repos.checkout})
    expect(r.code).toBe(0)
    expect(readFileSync(seen, 'utf8')).not.toMatch(/^GIT_SSH_COMMAND=/m)
  })
})
