import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, relative} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {agentRepoPaths, type AgentRepoPaths} from './agent-repo.js'
import {UNTRUSTED_CONFIG} from './git.js'
import {initAgentRepo} from './repo-init.js'

/** Every file and directory below `root` with its mode and, for files, its content (the `.git` file's path made relative). */
function tree(root: string, rootOf: (p: string) => string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name)
      const st = statSync(p)
      const key = relative(root, p)
      if (st.isDirectory()) {
        out[key] = `dir ${(st.mode & 0o777).toString(8)}`
        walk(p)
      } else out[key] = `file ${(st.mode & 0o777).toString(8)} ${readFileSync(p, 'utf8').replace(rootOf(p), '<root>')}`
    }
  }
  walk(root)
  return out
}

const gitInit = (p: AgentRepoPaths, branch: string) =>
  execFileSync('git', [...UNTRUSTED_CONFIG, 'init', '-q', '--template=', `--initial-branch=${branch}`, `--separate-git-dir=${p.gitDir}`, p.workdir], {env: {PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null'}})

describe("an agent's new repository written as files (repo-init.ts)", () => {
  let dir: string
  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'svc-repo-init-')))
    for (const side of ['files', 'git']) for (const d of ['repos', 'workspaces']) mkdirSync(join(dir, side, d), {recursive: true})
  })
  afterEach(() => rmSync(dir, {recursive: true, force: true}))

  it('is what git init writes, file for file, and git works in it', async () => {
    const mine = agentRepoPaths(join(dir, 'files'), 'a1')
    const theirs = agentRepoPaths(join(dir, 'git'), 'a1')
    await initAgentRepo(mine, 'svc/fix-it_2')
    gitInit(theirs, 'svc/fix-it_2')
    const side = (p: string) => (p.startsWith(join(dir, 'files')) ? join(dir, 'files') : join(dir, 'git'))
    expect(tree(mine.stateDir, side)).toEqual(tree(theirs.stateDir, side))
    expect(readFileSync(join(mine.workdir, '.git'), 'utf8')).toBe(`gitdir: ${mine.gitDir}\n`)
    // git reads it as its own: the unborn branch, the work tree, a clean fsck.
    const run = (...args: string[]) => execFileSync('git', args, {cwd: mine.workdir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env: {PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null'}}).trim()
    expect(run('symbolic-ref', 'HEAD')).toBe('refs/heads/svc/fix-it_2')
    expect(run('rev-parse', '--git-dir')).toBe(mine.gitDir)
    expect(run('rev-parse', '--show-toplevel')).toBe(mine.workdir)
    run('fsck', '--strict')
  })

  it('leaves a branch name it does not vouch for to git, which refuses what it must', async () => {
    const odd = agentRepoPaths(join(dir, 'files'), 'odd')
    await initAgentRepo(odd, 'svc/v1.2')
    expect(readFileSync(join(odd.gitDir, 'HEAD'), 'utf8')).toBe('ref: refs/heads/svc/v1.2\n')
    await expect(initAgentRepo(agentRepoPaths(join(dir, 'files'), 'bad'), 'svc/a..b')).rejects.toThrow(/git init failed/)
  })

  it('leaves a work tree that is already there to git', async () => {
    const p = agentRepoPaths(join(dir, 'files'), 'there')
    mkdirSync(p.workdir)
    await initAgentRepo(p, 'svc/there')
    // git init made it (it reuses an empty directory): the same files.
    expect(readFileSync(join(p.gitDir, 'HEAD'), 'utf8')).toBe('ref: refs/heads/svc/there\n')
    expect(readFileSync(join(p.workdir, '.git'), 'utf8')).toBe(`gitdir: ${p.gitDir}\n`)
  })
})
