import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {agentRepoPaths, type AgentRepoPaths} from '../../src/broker/workspace/agent-repo.js'
import {createWorkspace} from '../../src/broker/workspace/repository.js'

/** Runs git in `cwd` (tests only: the product runs git through src/broker/workspace/git.ts). */
export function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], {encoding: 'utf8', env: {...process.env, GIT_AUTHOR_NAME: 'Dev', GIT_AUTHOR_EMAIL: 'dev@example.com', GIT_COMMITTER_NAME: 'Dev', GIT_COMMITTER_EMAIL: 'dev@example.com'}}).replace(/\n$/, '')
}

export function write(dir: string, rel: string, content: string | Buffer) {
  mkdirSync(dirname(join(dir, rel)), {recursive: true})
  writeFileSync(join(dir, rel), content)
}

/** Writes `rel` in the repository at `dir` and commits it; answers the new commit. */
export function commitFile(dir: string, rel: string, content: string, message = `add ${rel}`): string {
  write(dir, rel, content)
  sh(dir, 'add', '--', rel)
  sh(dir, 'commit', '-q', '-m', message)
  return sh(dir, 'rev-parse', 'HEAD')
}

/** A binary file's bytes (NULs make git call it binary). */
export const BINARY = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1, 2, 3, 0, 255, 254])

export interface TestAgentWorkspace {
  path: string
  branch: string
  baseRef: string
  baseCommit: string
  paths: AgentRepoPaths
}

export interface TestRepos {
  root: string
  checkout: string
  /** A bare repository the checkout has as `origin`. */
  remote: string
  /** The broker's state directory of these tests' agents. */
  stateDir: string
  /** An agent's own repository on `svc/<slug>` (agent ID `slug`), made as the broker does at dispatch. */
  addAgent(slug: string, at?: {stateDir: string; agentId: string}): Promise<TestAgentWorkspace>
  /** Every file of the checkout's working tree, its index and HEAD's ref: to compare before and after. */
  fingerprint(): string
  dispose(): void
}

/**
 * A project checkout on branch `main` with a few committed files (text, binary, one to rename,
 * one to delete), `*.log` ignored, and a bare `origin`.
 */
export function makeRepos(): TestRepos {
  const root = mkdtempSync(join(tmpdir(), 'svc-git-'))
  const checkout = join(root, 'checkout')
  const remote = join(root, 'remote.git')
  mkdirSync(checkout)
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', remote])
  sh(checkout, 'init', '-q', '-b', 'main')
  sh(checkout, 'config', 'user.name', 'Dev')
  sh(checkout, 'config', 'user.email', 'dev@example.com')
  write(checkout, 'README.md', '# demo\n')
  write(checkout, 'src/app.ts', 'export const a = 1\nexport const b = 2\nexport const c = 3\n')
  write(checkout, 'src/old-name.ts', 'export function keep() {\n  return "a file long enough to be seen as renamed"\n}\n')
  write(checkout, 'docs/remove-me.md', 'to delete\n')
  write(checkout, 'logo.png', BINARY)
  write(checkout, '.gitignore', '*.log\n')
  sh(checkout, 'add', '-A')
  sh(checkout, 'commit', '-qm', 'initial')
  sh(checkout, 'remote', 'add', 'origin', remote)
  sh(checkout, 'push', '-q', 'origin', 'main')
  sh(checkout, 'branch', '--set-upstream-to=origin/main', 'main')
  const walk = (dir: string, out: string[] = []): string[] => {
    for (const e of readdirSync(dir).sort()) {
      if (e === '.git') continue
      const p = join(dir, e)
      if (statSync(p).isDirectory()) walk(p, out)
      else out.push(`${p.slice(checkout.length)}=${readFileSync(p).toString('base64')}`)
    }
    return out
  }
  return {
    root,
    checkout,
    remote,
    stateDir: join(root, 'state'),
    async addAgent(slug, at) {
      const paths = agentRepoPaths(at?.stateDir ?? join(root, 'state'), at?.agentId ?? slug)
      const ws = await createWorkspace({checkout, branch: `svc/${slug}`}, paths)
      return {...ws!, paths}
    },
    fingerprint: () => [...walk(checkout), `index=${readFileSync(join(checkout, '.git/index')).toString('base64')}`, `HEAD=${sh(checkout, 'rev-parse', 'HEAD')}`, `status=${sh(checkout, 'status', '--porcelain')}`].join('\n'),
    dispose: () => rmSync(root, {recursive: true, force: true}),
  }
}
