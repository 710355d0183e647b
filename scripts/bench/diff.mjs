// Agent diff benchmark: a checkout of BENCH_BASE_FILES (2000) files and an agent worktree that
// changed BENCH_FILES (5000) files: a third modified, a third new and untracked, a third new and
// committed, plus a few deletions and renames. Times `workspaceDiff` (the broker's side of
// `GET /api/v1/agents/:id/diff`: temporary-index snapshot, raw+numstat, the capped patch) and
// its --stat form. Prints the best and median of BENCH_ROUNDS (5). Target: the full answer
// under 2 s for 5,000 files (printed, never asserted).
import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync} from 'node:fs'
import {loadavg, tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {performance} from 'node:perf_hooks'
import {register} from 'tsx/esm/api'

register()
const {workspaceDiff} = await import('../../src/broker/workspace/diff.ts')

const BASE = Number(process.env.BENCH_BASE_FILES ?? 2000)
const FILES = Number(process.env.BENCH_FILES ?? 5000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const TARGET_MS = 2000

const git = (cwd, ...args) => execFileSync('git', ['-C', cwd, ...args], {encoding: 'utf8', env: {...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b'}}).trim()
const write = (dir, rel, text) => {
  mkdirSync(dirname(join(dir, rel)), {recursive: true})
  writeFileSync(join(dir, rel), text)
}
const body = (i, v) => Array.from({length: 30}, (_, l) => `line ${l} of file ${i} version ${l === 7 ? v : 0}`).join('\n') + '\n'

const root = mkdtempSync(join(tmpdir(), 'svc-bench-diff-'))
try {
  const checkout = join(root, 'checkout')
  mkdirSync(checkout)
  git(checkout, 'init', '-q', '-b', 'main')
  for (let i = 0; i < BASE; i++) write(checkout, `src/d${i % 50}/f${i}.txt`, body(i, 0))
  git(checkout, 'add', '-A')
  git(checkout, 'commit', '-qm', 'base')
  const wt = join(root, 'wt')
  git(checkout, 'worktree', 'add', '-q', '-b', 'svc/bench', wt, 'HEAD')
  const baseCommit = git(wt, 'rev-parse', 'HEAD')
  const third = Math.floor(FILES / 3)
  for (let i = 0; i < Math.min(third, BASE - 20); i++) write(wt, `src/d${i % 50}/f${i}.txt`, body(i, 1))
  for (let i = 0; i < third; i++) write(wt, `new/committed/c${i}.txt`, body(i, 2))
  git(wt, 'add', '-A')
  git(wt, 'commit', '-qm', 'agent work')
  for (let i = 0; i < FILES - 2 * third; i++) write(wt, `new/untracked/u${i}.txt`, body(i, 3))
  for (let i = BASE - 10; i < BASE; i++) unlinkSync(join(wt, `src/d${i % 50}/f${i}.txt`))
  for (let i = BASE - 20; i < BASE - 10; i++) renameSync(join(wt, `src/d${i % 50}/f${i}.txt`), join(wt, `src/d${i % 50}/moved-${i}.txt`))
  const ws = {path: wt, branch: 'svc/bench', baseRef: 'main', baseCommit}

  const time = async (opts) => {
    const t = []
    let last
    for (let r = 0; r < ROUNDS; r++) {
      const s = performance.now()
      last = await workspaceDiff(ws, opts)
      t.push(performance.now() - s)
    }
    t.sort((a, b) => a - b)
    return {best: t[0], median: t[Math.floor(t.length / 2)], last}
  }
  const full = await time({})
  const stat = await time({stat: true})
  const ms = (n) => `${Math.round(n)} ms`
  console.log(`agent diff of ${full.last.files.length} changed files (${BASE} in the base), patch ${full.last.patch.length} bytes${full.last.truncated ? ' (truncated at 1 MiB)' : ''}; load ${loadavg()[0].toFixed(2)}`)
  console.log(`  full:  best ${ms(full.best)}, median ${ms(full.median)} (target < ${TARGET_MS} ms: ${full.median < TARGET_MS ? 'met' : 'NOT met'})`)
  console.log(`  stat:  best ${ms(stat.best)}, median ${ms(stat.median)}`)
} finally {
  rmSync(root, {recursive: true, force: true})
}
