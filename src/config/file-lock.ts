import {AsyncLocalStorage} from 'node:async_hooks'
import {randomBytes} from 'node:crypto'
import {closeSync, openSync, readFileSync, readdirSync, statSync, unlinkSync, writeFileSync, writeSync} from 'node:fs'
import {hostname} from 'node:os'
import {basename, dirname, join} from 'node:path'
import {AppError} from '../api/app-error.js'

/** What a lock file holds. */
interface LockInfo {
  pid: number
  host: string
  createdAt: string
  nonce: string
}

/**
 * Locks held by the current async call chain, so a holder may take its own lock again. On Node 20
 * an AsyncLocalStorage that has run turns on async hooks for every promise of the process, for
 * good: a Hub that once saved its settings (it records its co-located broker at start) paid
 * about 1 us per promise on every request after (the status path's CPU doubled). So it is
 * disabled again whenever no lock is held in this process (`holders`): hooks only while held.
 */
const held = new AsyncLocalStorage<ReadonlySet<string>>()
let holders = 0

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** True when a process with this pid exists on this machine (EPERM means it exists). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function readRaw(file: string): string | null {
  try {
    return readFileSync(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
}

function parseInfo(raw: string): LockInfo | null {
  try {
    const v = JSON.parse(raw) as LockInfo
    return typeof v.pid === 'number' ? v : null
  } catch {
    return null
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs
  } catch {
    return 0
  }
}

/**
 * A lock is stale when its process is gone: same host and the pid is dead. A lock file whose
 * content is unreadable (its writer died between create and write) is stale after 2 s.
 */
function isStale(file: string, raw: string): boolean {
  const info = parseInfo(raw)
  if (!info) return ageMs(file) > 2000
  if (info.host !== hostname()) return false
  return !pidAlive(info.pid)
}

function tryCreate(file: string, info: LockInfo): boolean {
  let fd: number
  try {
    fd = openSync(file, 'wx', 0o600)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
  try {
    writeSync(fd, JSON.stringify(info) + '\n')
  } finally {
    closeSync(fd)
  }
  return true
}

function unlinkQuiet(file: string) {
  try {
    unlinkSync(file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
}

/**
 * Removes a stale lock. Breakers serialise on `<lock>.break` (itself recovered when its holder
 * died) and remove the lock only when its content is still the stale content they judged, so a
 * fresh lock taken in between is never removed.
 */
function breakStale(lockFile: string, staleRaw: string): boolean {
  const guard = lockFile + '.break'
  const me: LockInfo = {pid: process.pid, host: hostname(), createdAt: new Date().toISOString(), nonce: randomBytes(8).toString('hex')}
  if (!tryCreate(guard, me)) {
    const raw = readRaw(guard)
    if (raw !== null && (isStale(guard, raw) || ageMs(guard) > 10_000)) unlinkQuiet(guard)
    return false
  }
  try {
    if (readRaw(lockFile) === staleRaw) unlinkQuiet(lockFile)
    return true
  } finally {
    unlinkQuiet(guard)
  }
}

/** Removes temp files of writers that died before their rename (`.<name>.tmp-<pid>-<rand>`). */
function sweepTemps(target: string) {
  const dir = dirname(target)
  const prefix = `.${basename(target)}.tmp-`
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return
  }
  for (const n of names) {
    if (!n.startsWith(prefix)) continue
    const pid = Number(n.slice(prefix.length).split('-')[0])
    if (pid !== process.pid && !pidAlive(pid)) unlinkQuiet(join(dir, n))
  }
}

export interface LockOptions {
  /** Give up after this long (default 30 s) with 409 `conflict`. */
  timeoutMs?: number
}

let ticketSeq = 0

/**
 * Waiters queue in files beside the lock (`<lock>.wait-<pid>-<nonce>` holding a ticket), so a
 * process that writes in a loop cannot starve the others: whoever waits longest goes first, and
 * a newcomer lets existing waiters go before it. Files of dead processes are removed.
 */
class WaitQueue {
  private ticket: string | null = null
  private readonly file: string

  constructor(
    private readonly lockFile: string,
    nonce: string,
  ) {
    this.file = `${lockFile}.wait-${process.pid}-${nonce}`
  }

  join() {
    if (this.ticket) return
    this.ticket = `${Date.now().toString().padStart(15, '0')}-${String(ticketSeq++).padStart(9, '0')}-${process.pid}`
    writeFileSync(this.file, this.ticket)
  }

  leave() {
    if (this.ticket) unlinkQuiet(this.file)
    this.ticket = null
  }

  /** True when another live waiter is ahead of us (any waiter, when we are not queued). */
  othersAhead(): boolean {
    const dir = dirname(this.lockFile)
    const prefix = `${basename(this.lockFile)}.wait-`
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      return false
    }
    for (const n of names) {
      const full = join(dir, n)
      if (!n.startsWith(prefix) || full === this.file) continue
      const pid = Number(n.slice(prefix.length).split('-')[0])
      if (!pidAlive(pid)) {
        unlinkQuiet(full)
        continue
      }
      if (!this.ticket) return true
      const theirs = readRaw(full)
      if (theirs && theirs < this.ticket) return true
    }
    return false
  }
}

/**
 * Runs `fn` holding the cross-process lock of `target` (`<target>.lock`, created with O_EXCL,
 * holding pid, host and time). A lock left by a dead process is recovered; waiters are served
 * in turn. Re-entrant within one async call chain; other callers in the same process wait like
 * other processes do.
 */
export async function withFileLock<T>(target: string, fn: () => T | Promise<T>, opts: LockOptions = {}): Promise<T> {
  const mine = held.getStore()
  if (mine?.has(target)) return fn()
  const lockFile = target + '.lock'
  const info: LockInfo = {pid: process.pid, host: hostname(), createdAt: new Date().toISOString(), nonce: randomBytes(8).toString('hex')}
  const queue = new WaitQueue(lockFile, info.nonce)
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000)
  let delay = 1
  try {
    for (;;) {
      if (!queue.othersAhead()) {
        if (tryCreate(lockFile, info)) break
        const raw = readRaw(lockFile)
        if (raw === null) continue
        if (isStale(lockFile, raw) && breakStale(lockFile, raw)) continue
      }
      queue.join()
      if (Date.now() > deadline) {
        const raw = readRaw(lockFile)
        const holder = raw ? parseInfo(raw) : null
        throw new AppError('conflict', `${target} is locked${holder ? ` by process ${holder.pid} since ${holder.createdAt}` : ''}; try again`, {lock: lockFile})
      }
      await sleep(delay + Math.random() * delay)
      delay = Math.min(delay * 2, 8)
    }
  } finally {
    queue.leave()
  }
  try {
    sweepTemps(target)
    holders++
    try {
      return await held.run(new Set([...(mine ?? []), target]), fn)
    } finally {
      // Continuations of `fn` that outlive it no longer count as holding the lock either.
      if (--holders === 0) held.disable()
    }
  } finally {
    const raw = readRaw(lockFile)
    if (raw !== null && parseInfo(raw)?.nonce === info.nonce) unlinkQuiet(lockFile)
  }
}
