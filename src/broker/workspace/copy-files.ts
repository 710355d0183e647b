/**
 * `workspace.copy` (docs/environments.md): files of the project's checkout that git does not
 * carry (`.env`, `.env.*`, a `node_modules`) copied into a new agent's work tree by the broker,
 * once, when the agent is made and before anything runs in it. The checkout is the user's, the
 * work tree is about to be the agent's, so both sides are read without trusting links:
 *
 * - a glob is relative to the checkout, never absolute, never with a `..` segment, never
 *   reaching into `.git` (the work tree's `.git` names the agent's repository);
 * - the walk never enters a linked directory; a link that is matched or met inside a copied
 *   tree is copied as a (relative) link only when what it points to is inside the checkout,
 *   so a link to `/etc/shadow` (or to `~/.ssh`) never brings that file into the agent's reach;
 * - in the work tree every directory on the way must be a real directory (a committed link
 *   named like an ignored directory must not make the host write through it), and nothing that
 *   is there already is replaced (a tracked file keeps its committed content);
 * - files are copied, never hard-linked (a link would share the user's file writable with the
 *   agent): with a reflink (FICLONE) where the file system has them, else byte for byte, modes
 *   kept but set-id bits.
 */
import {constants, lstatSync, mkdirSync, readdirSync, readlinkSync, realpathSync, symlinkSync, chmodSync, type Dirent, type Stats} from 'node:fs'
import {copyFile} from 'node:fs/promises'
import {dirname, join, relative, resolve, sep} from 'node:path'

export type CopyMethod = 'reflink' | 'copy'

export interface CopyResult {
  /** How file contents were copied (`reflink` when the first file could be cloned); null when no file was. */
  method: CopyMethod | null
  files: number
  bytes: number
  links: number
  /** Matches left out, with why (a link out of the checkout, a linked directory in the work tree, ...). */
  skipped: Array<{path: string; reason: string}>
}

/** Why a glob can never be used, or null. Settings validation and the copy share it. */
export function copyGlobProblem(glob: string): string | null {
  if (typeof glob !== 'string' || glob.trim() === '') return 'is empty'
  if (glob.startsWith('/') || /^[A-Za-z]:/.test(glob)) return 'must be relative to the checkout'
  const segs = glob.split('/').filter((s) => s !== '' && s !== '.')
  if (segs.some((s) => s === '..')) return 'must stay inside the checkout (no `..`)'
  if (segs[0] === '.git' || segs.length === 0) return 'cannot name the checkout\'s `.git`'
  if (glob.includes('\0')) return 'has a NUL byte'
  return null
}

const GLOB_CHARS = /[*?[]/

/** One path segment's glob (`*`, `?`, `[abc]`) as a RegExp matching a whole name. */
function segmentRegExp(seg: string): RegExp {
  let re = ''
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!
    if (c === '*') re += '.*'
    else if (c === '?') re += '.'
    else if (c === '[') {
      const end = seg.indexOf(']', i + 2)
      if (end < 0) re += '\\['
      else {
        const body = seg.slice(i + 1, end).replace(/\\/g, '\\\\')
        re += `[${body.startsWith('!') ? '^' + body.slice(1) : body}]`
        i = end
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&')
  }
  return new RegExp(`^${re}$`)
}

const lstat = (p: string) => lstatSync(p, {throwIfNoEntry: false})

/**
 * The checkout paths (relative, `/`-separated) a glob matches, walking only real directories
 * and never `.git`. `**` matches any number of directories.
 */
function expand(root: string, segs: string[], rel = '', out = new Set<string>()): Set<string> {
  if (segs.length === 0) {
    if (rel) out.add(rel)
    return out
  }
  const [seg, ...rest] = segs as [string, ...string[]]
  const dir = join(root, rel)
  const isRealDir = (p: string) => lstat(p)?.isDirectory() === true
  if (seg === '**') {
    expand(root, rest, rel, out)
    if (!isRealDir(dir)) return out
    for (const e of readdirSync(dir, {withFileTypes: true})) if (e.isDirectory() && e.name !== '.git') expand(root, segs, rel ? `${rel}/${e.name}` : e.name, out)
    return out
  }
  const names = GLOB_CHARS.test(seg) ? (isRealDir(dir) ? readdirSync(dir).filter((n) => segmentRegExp(seg).test(n)) : []) : [seg]
  for (const name of names) {
    if (name === '.git') continue
    const next = rel ? `${rel}/${name}` : name
    const st = lstat(join(root, next))
    if (!st) continue
    if (rest.length === 0) out.add(next)
    else if (st.isDirectory()) expand(root, rest, next, out)
  }
  return out
}

/** Copies the matches of `globs` from `checkout` into `workdir` (see the file comment). */
export async function copyIntoWorkspace(checkout: string, workdir: string, globs: string[]): Promise<CopyResult> {
  const root = realpathSync(checkout)
  const result: CopyResult = {method: null, files: 0, bytes: 0, links: 0, skipped: []}
  const matches = new Set<string>()
  for (const g of globs) {
    const problem = copyGlobProblem(g)
    if (problem) {
      result.skipped.push({path: g, reason: `the glob ${problem}`})
      continue
    }
    for (const m of expand(root, g.split('/').filter((s) => s !== '' && s !== '.'))) matches.add(m)
  }
  // A match inside another (a directory already copied whole) is not copied twice.
  const sorted = [...matches].sort()
  const tops = sorted.filter((m, i) => !sorted.slice(0, i).some((o) => m.startsWith(o + '/')))
  const jobs: Array<{src: string; dst: string; mode: number; size: number}> = []
  const dirModes: Array<{dst: string; mode: number}> = []
  // The first few say enough (a tree of tracked files would list each).
  const skip = (path: string, reason: string) => void (result.skipped.length < 50 && result.skipped.push({path, reason}))

  /** A link copied as a link only when its target is inside the checkout (written relative). */
  const copyLink = (src: string, dst: string, rel: string) => {
    let target: string
    try {
      target = realpathSync(resolve(dirname(src), readlinkSync(src)))
    } catch {
      return skip(rel, 'a link whose target does not exist')
    }
    if (target !== root && !target.startsWith(root + sep)) return skip(rel, 'a link to a file outside the checkout')
    // Relative to where it sits in the work tree (the same place as in the checkout).
    const inTree = join(workdir, relative(root, target))
    symlinkSync(relative(dirname(dst), inTree) || '.', dst)
    result.links++
  }

  const walk = (src: string, dst: string, rel: string, kind: Dirent | Stats) => {
    const there = lstat(dst)
    // A directory the work tree has (tracked files in it) is filled in; anything else there stays.
    if (there && !(there.isDirectory() && kind.isDirectory())) return skip(rel, 'already in the work tree (kept as committed)')
    if (kind.isSymbolicLink()) return copyLink(src, dst, rel)
    if (kind.isFile()) {
      const st = lstatSync(src)
      return void jobs.push({src, dst, mode: st.mode & 0o7777, size: st.size})
    }
    if (!kind.isDirectory()) return skip(rel, 'not a regular file, directory or link')
    if (!there) {
      // Writable by us while it fills; its own mode once full (dirModes, below).
      mkdirSync(dst, {mode: 0o700})
      dirModes.push({dst, mode: lstatSync(src).mode & 0o777})
    }
    for (const e of readdirSync(src, {withFileTypes: true})) walk(join(src, e.name), join(dst, e.name), `${rel}/${e.name}`, e)
  }

  for (const rel of tops) {
    const segs = rel.split('/')
    // Every directory on the way in the work tree: a real one, made here (from the checkout's) when missing.
    let parent = workdir
    let blocked: string | null = null
    for (let i = 0; i < segs.length - 1 && !blocked; i++) {
      parent = join(parent, segs[i]!)
      const st = lstat(parent)
      if (!st) {
        mkdirSync(parent, {mode: 0o700})
        dirModes.push({dst: parent, mode: lstatSync(join(root, ...segs.slice(0, i + 1))).mode & 0o777})
      } else if (!st.isDirectory()) blocked = `${segs.slice(0, i + 1).join('/')} in the work tree is ${st.isSymbolicLink() ? 'a link' : 'not a directory'}`
    }
    if (blocked) {
      skip(rel, blocked)
      continue
    }
    const src = join(root, ...segs)
    walk(src, join(workdir, ...segs), rel, lstatSync(src))
  }

  await copyFiles(jobs, result)
  // Deepest first: a read-only directory is closed only after what is inside it was made.
  for (const d of dirModes.reverse()) chmodSync(d.dst, d.mode)
  return result
}

/** Copies file contents, a few at a time; the first file decides whether reflinks work here. */
async function copyFiles(jobs: Array<{src: string; dst: string; mode: number; size: number}>, result: CopyResult): Promise<void> {
  const excl = constants.COPYFILE_EXCL
  let flags = excl
  const one = async (j: (typeof jobs)[number]) => {
    await copyFile(j.src, j.dst, flags)
    // copyFile keeps the source's mode; set-id bits are not the agent's to get.
    if (j.mode & 0o7000) chmodSync(j.dst, j.mode & 0o777)
    result.files++
    result.bytes += j.size
  }
  if (jobs.length === 0) return
  const first = jobs[0]!
  try {
    await copyFile(first.src, first.dst, excl | constants.COPYFILE_FICLONE_FORCE)
    result.method = 'reflink'
    flags = excl | constants.COPYFILE_FICLONE
    if (first.mode & 0o7000) chmodSync(first.dst, first.mode & 0o777)
    result.files++
    result.bytes += first.size
  } catch {
    result.method = 'copy'
    await one(first)
  }
  let next = 1
  const worker = async () => {
    while (next < jobs.length) await one(jobs[next++]!)
  }
  await Promise.all(Array.from({length: 8}, worker))
}
