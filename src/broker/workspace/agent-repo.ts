/**
 * Where an agent's repository lives and what the host may read of it. Each agent has its own
 * repository (never a worktree of the user's checkout): its git directory `repos/<id>.git`
 * (mounted read-write into its sandbox) whose objects borrow the checkout's read-only through
 * `objects/info/alternates`, and its work tree `workspaces/<id>`. Everything in both is the
 * agent's to write, so the host never runs git *in* them: every host git command for an agent
 * runs in `review/<id>.git`, a bare repository only svc writes, whose alternates name the agent's
 * objects, with the hardened settings of git.ts (`untrusted`). What the host reads of the agent's
 * git directory itself (HEAD, a ref, the index) it reads as plain files, refusing symlinks and
 * anything but a hash. The record `repos/<id>.json`, written when the agent is made, fixes what
 * its sandbox mounts; nothing is ever re-derived from files the agent can write.
 */
import {closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readSync, renameSync, writeFileSync} from 'node:fs'
import {basename, isAbsolute, join, relative, sep} from 'node:path'
import type {EnvironmentRecord} from './environment.js'
import {WorkspaceRefusal} from './refusal.js'

export interface AgentRepoPaths {
  stateDir: string
  agentId: string
  /** The work tree: the agent's working directory. */
  workdir: string
  /** The agent's git directory (the work tree's `.git` file names it). */
  gitDir: string
  /** svc's own bare repository for host-side git work on the agent's objects. */
  hostDir: string
  /** What was fixed when the agent was made (AgentRepoRecord). */
  record: string
}

/** Agent IDs name directories: only plain names are accepted. */
const AGENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

export function agentRepoPaths(stateDir: string, agentId: string): AgentRepoPaths {
  if (!AGENT_ID.test(agentId) || agentId.includes('..')) throw new WorkspaceRefusal('workspace_failed', `agent ID ${JSON.stringify(agentId)} cannot name a directory`)
  return {
    stateDir,
    agentId,
    workdir: join(stateDir, 'workspaces', agentId),
    gitDir: join(stateDir, 'repos', `${agentId}.git`),
    hostDir: join(stateDir, 'review', `${agentId}.git`),
    record: join(stateDir, 'repos', `${agentId}.json`),
  }
}

export interface AgentRepoRecord {
  version: 1
  /** The checkout's object directory the agent's repository borrows from (mounted read-only), or null (a clone). */
  objects: string | null
  /** The exact content of the agent's `objects/info/alternates` as svc wrote it ('' for none). */
  alternates: string
  /** The project's checkout the repository was made from, or null. */
  checkout: string | null
  /** The remote a clone was made from (where a push goes when there is no checkout), or null. */
  remote: string | null
  /** Files copied in and the setup decided when the agent was made (environment.ts); absent before. */
  environment?: EnvironmentRecord
}

export function writeRecord(paths: AgentRepoPaths, rec: AgentRepoRecord): void {
  const tmp = `${paths.record}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(rec) + '\n', {mode: 0o600})
  renameSync(tmp, paths.record)
}

/** The record, or null when the agent was made before per-agent repositories (a worktree) or never. */
export function readRecord(paths: AgentRepoPaths): AgentRepoRecord | null {
  try {
    const rec = JSON.parse(readFileSync(paths.record, 'utf8')) as AgentRepoRecord
    return rec?.version === 1 ? rec : null
  } catch {
    return null
  }
}

/**
 * The paths an agent's sandbox or container mounts for its repository, from its record only,
 * and checked: its own git directory read-write (a real directory where svc made it), and the
 * checkout's object directory read-only (an absolute `objects` directory outside the broker's
 * state, not a link). Anything else is refused before the agent starts.
 */
export function repoMounts(paths: AgentRepoPaths, rec: AgentRepoRecord): {writable: string[]; readable: string[]} {
  const git = lstatSync(paths.gitDir, {throwIfNoEntry: false})
  if (!git?.isDirectory()) throw new WorkspaceRefusal('workspace_missing', `the agent's repository ${paths.gitDir} is missing on this broker`, {path: paths.gitDir})
  if (rec.objects !== null) {
    const st = lstatSync(rec.objects, {throwIfNoEntry: false})
    const ok = isAbsolute(rec.objects) && basename(rec.objects) === 'objects' && !rec.objects.split('/').includes('..') && !isInside(paths.stateDir, rec.objects) && st?.isDirectory()
    if (!ok) throw new WorkspaceRefusal('workspace_tampered', `the agent's record names ${JSON.stringify(rec.objects)} as the checkout's objects, which svc does not mount`)
  }
  return {writable: [paths.gitDir], readable: rec.objects ? [rec.objects] : []}
}

const MAX_READ = 1 << 20

/**
 * Reads `rel` below `root` as the agent left it, refusing to follow a symlink at any step (an
 * agent could point one at the Hub's files) and anything but a regular file. Null when absent.
 */
export function readAgentFile(root: string, rel: string, maxBytes = MAX_READ): Buffer | null {
  const parts = rel.split('/').filter(Boolean)
  if (parts.some((p) => p === '..' || p === '.')) throw new WorkspaceRefusal('workspace_tampered', `refusing to read ${rel}`)
  let at = root
  for (const [i, part] of parts.entries()) {
    at = join(at, part)
    const st = lstatSync(at, {throwIfNoEntry: false})
    if (!st) return null
    if (st.isSymbolicLink()) throw tampered(`${relative(root, at) || '.'} is a symbolic link`)
    if (i < parts.length - 1 && !st.isDirectory()) return null
  }
  let fd: number
  try {
    fd = openSync(at, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw tampered(`${rel} cannot be read: ${(err as Error).message}`)
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw tampered(`${rel} is not a regular file`)
    if (st.size > maxBytes) throw tampered(`${rel} is larger than ${maxBytes} bytes`)
    const buf = Buffer.alloc(st.size)
    let off = 0
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off)
      if (n === 0) break
      off += n
    }
    return buf.subarray(0, off)
  } finally {
    closeSync(fd)
  }
}

const tampered = (what: string) => new WorkspaceRefusal('workspace_tampered', `the agent's repository was changed in a way svc does not read: ${what}; its work can still be read inside the agent`)

const HASH = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/
const REF = /^refs\/[A-Za-z0-9._\/+@-]+$/

/** A full ref name svc reads (no `..`, no odd characters: it becomes a path below the git dir). */
function checkRef(ref: string): string {
  if (!REF.test(ref) || ref.includes('..') || ref.includes('//') || ref.endsWith('/') || ref.endsWith('.lock')) throw tampered(`the ref name ${JSON.stringify(ref.slice(0, 80))}`)
  return ref
}

/** The commit a ref of the agent's repository names (loose, then packed), or null when it has none. */
export function readAgentRef(paths: AgentRepoPaths, ref: string): string | null {
  checkRef(ref)
  const loose = readAgentFile(paths.gitDir, ref, 4096)
  if (loose) {
    const v = loose.toString('utf8').trim()
    if (!HASH.test(v)) throw tampered(`${ref} does not hold a commit hash`)
    return v
  }
  const packed = readAgentFile(paths.gitDir, 'packed-refs', 64 << 20)
  if (!packed) return null
  for (const line of packed.toString('utf8').split('\n')) {
    const cut = line.indexOf(' ')
    if (cut > 0 && line.slice(cut + 1) === ref) {
      const v = line.slice(0, cut)
      if (!HASH.test(v)) throw tampered(`packed-refs does not hold a hash for ${ref}`)
      return v
    }
  }
  return null
}

/** The agent's HEAD: the branch it names (null when detached) and its commit (null when unborn). */
export function readAgentHead(paths: AgentRepoPaths): {ref: string | null; commit: string | null} {
  const head = readAgentFile(paths.gitDir, 'HEAD', 4096)
  if (!head) throw tampered('HEAD is missing')
  const text = head.toString('utf8').trim()
  if (text.startsWith('ref: ')) {
    const ref = checkRef(text.slice(5).trim())
    return {ref, commit: readAgentRef(paths, ref)}
  }
  if (!HASH.test(text)) throw tampered('HEAD holds neither a ref nor a commit hash')
  return {ref: null, commit: text}
}

/**
 * Checks, before host git reads the agent's objects, that they are where svc put them: the git
 * directory and its `objects` real directories (not links elsewhere) and `objects/info/alternates`
 * exactly as written, so the host reads objects from nowhere else. A symlinked or rewritten one
 * is `workspace_tampered`.
 */
export function checkAgentRepo(paths: AgentRepoPaths, rec: AgentRepoRecord): void {
  for (const dir of [paths.gitDir, join(paths.gitDir, 'objects')]) {
    const st = lstatSync(dir, {throwIfNoEntry: false})
    if (!st) throw new WorkspaceRefusal('workspace_missing', `the agent's repository ${paths.gitDir} no longer exists`, {path: paths.gitDir})
    if (!st.isDirectory()) throw tampered(`${dir} is not a directory`)
  }
  const alt = readAgentFile(paths.gitDir, 'objects/info/alternates', 64 << 10)
  if ((alt?.toString('utf8') ?? '') !== rec.alternates) throw tampered('objects/info/alternates names other object directories')
}

/** A workspace made before per-agent repositories: a worktree of the checkout, no record. */
export function isLegacyWorkspace(paths: AgentRepoPaths): boolean {
  return !readRecord(paths) && lstatSync(join(paths.workdir, '.git'), {throwIfNoEntry: false})?.isFile() === true
}

export const legacyRefusal = (paths: AgentRepoPaths) =>
  new WorkspaceRefusal('workspace_legacy', `this agent was made by an older svc as a worktree of the project's checkout, which an agent can use to change the checkout; its work is on its branch in the checkout. Delete the agent (svc agent delete; the branch stays) and create it again`, {path: paths.workdir})

/** The agent's record, refusing an agent made as a worktree (legacy) or whose repository is gone. */
export function recordOrRefuse(paths: AgentRepoPaths): AgentRepoRecord {
  const rec = readRecord(paths)
  if (rec) return rec
  if (isLegacyWorkspace(paths)) throw legacyRefusal(paths)
  throw new WorkspaceRefusal('workspace_missing', `the agent's repository ${paths.gitDir} does not exist on this broker`, {path: paths.workdir})
}

/** `path` lies strictly inside `dir` (both absolute, already resolved). */
export const isInside = (dir: string, path: string) => path.startsWith(dir.endsWith(sep) ? dir : dir + sep)
