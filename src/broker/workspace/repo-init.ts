/**
 * `git init -q --template= --initial-branch=<branch> --separate-git-dir=<gitDir> <workdir>` for an
 * agent's new repository, written as files instead of run: every agent's start waits for it, and
 * a process forked from the Hub (which hosts the co-located broker) costs its event loop 10-30 ms
 * before git even runs. What git would write is fixed for these repositories: svc runs git
 * without system or global config (git.ts, `untrusted`) and no template, so no setting of anyone
 * else's can change it; only the file system can, through the probes git makes (file modes,
 * symbolic links, case). Where a probe or the branch name is anything but the plain case, git
 * itself runs as before, so this only ever saves a process, never writes what git would not.
 */
import {chmodSync, existsSync, lstatSync, mkdirSync, realpathSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import type {AgentRepoPaths} from './agent-repo.js'
import {git} from './git.js'

/**
 * The branch names whose `refs/heads/<name>` git accepts for certain (repository.ts has the same
 * rule for its checks): others are left to git, which refuses what it must.
 */
const PLAIN_BRANCH = /^[A-Za-z0-9][A-Za-z0-9_-]*(?:\/[A-Za-z0-9][A-Za-z0-9_-]*)*$/

/** The config git 2.x writes for a new non-bare repository on a POSIX file system with modes, links and case. */
const CONFIG = '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n'

/**
 * The probes git's init makes (init-db.c create_default_files): whether the executable bit
 * sticks, whether symbolic links can be made, and whether names differ by case. True when all
 * are as on an ordinary Linux file system, the case CONFIG is written for.
 */
function plainFileSystem(gitDir: string): boolean {
  const config = join(gitDir, 'config')
  try {
    chmodSync(config, 0o755)
    const executable = (statSync(config).mode & 0o100) !== 0
    chmodSync(config, 0o644)
    if (!executable) return false
    const link = join(gitDir, `svc-probe-${process.pid}`)
    symlinkSync('testing', link)
    unlinkSync(link)
    // git's own probe: a file found under another case is a case-insensitive file system.
    return lstatSync(join(gitDir, 'CoNfIg'), {throwIfNoEntry: false}) === undefined
  } catch {
    return false
  }
}

function tryMkdir(dir: string): boolean {
  try {
    mkdirSync(dir)
    return true
  } catch {
    return false
  }
}

/**
 * Makes the agent's empty repository `paths.gitDir` on `branch` (unborn) and its work tree
 * `paths.workdir` with the `.git` file naming it, as git init would; neither may exist. Runs git
 * init when the files would differ from what git writes.
 */
export async function initAgentRepo(paths: AgentRepoPaths, branch: string): Promise<void> {
  // Only into nothing: what is there already (a start's leftover) is git's to reuse as it does.
  if (PLAIN_BRANCH.test(branch) && !branch.endsWith('.lock') && !existsSync(paths.workdir) && tryMkdir(paths.gitDir)) {
    try {
      for (const d of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags']) mkdirSync(join(paths.gitDir, d), {recursive: true})
      writeFileSync(join(paths.gitDir, 'config'), CONFIG)
      if (plainFileSystem(paths.gitDir)) {
        writeFileSync(join(paths.gitDir, 'HEAD'), `ref: refs/heads/${branch}\n`)
        mkdirSync(paths.workdir)
        // git names the git directory by its real path in the work tree's `.git`.
        writeFileSync(join(paths.workdir, '.git'), `gitdir: ${realpathSync(paths.gitDir)}\n`)
        return
      }
    } catch {
      // Left to git below, from nothing (what was written here goes first).
    }
    rmSync(paths.gitDir, {recursive: true, force: true})
    rmSync(paths.workdir, {recursive: true, force: true})
  }
  await git(['init', '-q', '--template=', `--initial-branch=${branch}`, `--separate-git-dir=${paths.gitDir}`, paths.workdir], {cwd: dirname(paths.workdir), untrusted: true})
}
