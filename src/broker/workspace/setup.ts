/**
 * A new agent's setup step (docs/environments.md): the project's committed `.svc/setup`, else
 * the setting `workspace.setup` (a shell command), run in the agent's work tree before its
 * harness starts. It is the project's code, so it never runs on the host: it runs as the first
 * part of the agent's own session (AgentSpec.prelude), in the same sandbox or container, with
 * the same environment, network and mounts, and its output is the start of the agent's log.
 * The prelude writes the exit code to a file in the agent's HOME and then execs the harness (or
 * ends the session on a failure); the broker waits for that file (bounded by
 * `workspace.setup_timeout`) while the Hub shows the agent `provisioning`. A failure or a
 * timeout ends the session and fails the start with the exit code and the output's last lines.
 */
import {closeSync, constants, fstatSync, lstatSync, openSync, readSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import type {Runtime, RuntimeHandle} from '../runtime.js'

/** What runs and for how long, decided when the agent is made and recorded with its repository. */
export interface SetupPlan {
  /** A shell command run with `/bin/sh -c` in the work tree. */
  command: string
  /** Where it came from: the committed file or the setting. */
  from: '.svc/setup' | 'workspace.setup'
  timeoutMs: number
}

/** The committed `.svc/setup` of a fresh work tree (a real executable file, not a link), else the setting. */
export function setupPlan(workdir: string, setting: string | null, timeoutMs: number): SetupPlan | null {
  const dir = lstatSync(join(workdir, '.svc'), {throwIfNoEntry: false})
  const file = dir?.isDirectory() ? lstatSync(join(workdir, '.svc', 'setup'), {throwIfNoEntry: false}) : undefined
  if (file?.isFile() && file.mode & 0o111) return {command: './.svc/setup', from: '.svc/setup', timeoutMs}
  return setting ? {command: setting, from: 'workspace.setup', timeoutMs} : null
}

/** Where the prelude writes the setup's exit code (in the agent's HOME, as the agent sees it too). */
export const setupStatusFile = (home: string) => join(home, '.svc-setup-status')

/**
 * `sh -c PRELUDE <status file> <setup command> <harness argv...>`: runs the setup with stdin
 * from /dev/null (a prompt would hang it), records its exit code, then execs the harness, or
 * ends with the setup's code.
 */
const PRELUDE = [
  's="$0"; c="$1"; shift',
  `printf '[svc] setup: %s\\n' "$c"`,
  '/bin/sh -c "$c" </dev/null',
  'r=$?',
  `printf '%s\\n' "$r" > "$s"`,
  `if [ "$r" != 0 ]; then printf '[svc] setup failed: exit code %s\\n' "$r"; exit "$r"; fi`,
  `printf '[svc] setup done\\n'`,
  'exec "$@"',
].join('\n')

/** The argv put before the harness command when the setup runs (AgentSpec.prelude). */
export function setupPrelude(plan: SetupPlan, home: string): string[] {
  return ['/bin/sh', '-c', PRELUDE, setupStatusFile(home), plan.command]
}

/** Removes a status file left by an earlier run (a link the agent planted goes as a link). */
export function clearSetupStatus(home: string): void {
  rmSync(setupStatusFile(home), {force: true})
}

/** The exit code in the status file, or null while there is none. Never follows a link, reads 16 bytes at most. */
export function readSetupStatus(home: string): number | null {
  let fd: number
  try {
    fd = openSync(setupStatusFile(home), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch {
    return null
  }
  try {
    if (!fstatSync(fd).isFile()) return null
    const buf = Buffer.alloc(16)
    const n = readSync(fd, buf, 0, 16, 0)
    const m = /^(\d{1,3})\n$/.exec(buf.subarray(0, n).toString('utf8'))
    return m ? Number(m[1]) : null
  } finally {
    closeSync(fd)
  }
}

/** A setup that failed or did not finish: the start fails with this message (the agent's `error`). */
export class SetupFailed extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SetupFailed'
  }
}

const TAIL_LINES = 20
const TAIL_BYTES = 64 * 1024

/** The last lines of a log, terminal escapes and carriage returns taken out, secrets masked. */
export function logTail(raw: Buffer, secrets: string[]): string {
  let text = raw.subarray(Math.max(0, raw.length - TAIL_BYTES)).toString('utf8')
  // CSI and OSC sequences, then other escapes; a carriage return keeps what was drawn last.
  text = text.replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, '').replace(/\x1b\][^\x07\x1b]*(\x07|\x1b\\)/g, '').replace(/\x1b[@-_]/g, '')
  const lines = text.split('\n').map((l) => (l.split('\r').filter((p) => p !== '').pop() ?? '').trimEnd())
  let tail = lines.filter((l) => l !== '' && !l.startsWith('[svc] setup')).slice(-TAIL_LINES).join('\n')
  for (const s of secrets) if (s.length >= 6) tail = tail.split(s).join('****')
  return tail
}

async function logOf(runtime: Runtime, handle: RuntimeHandle): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const c of runtime.logs(handle, {follow: false})) {
      chunks.push(c)
      size += c.length
      // Only the end is kept: drop what is far behind it.
      while (size - (chunks[0]?.length ?? 0) > TAIL_BYTES) size -= chunks.shift()!.length
    }
  } catch {
    // No log (the container is gone): the message says the code without lines.
  }
  return Buffer.concat(chunks)
}

/**
 * Waits until the setup in the agent's just started session has finished: returns when it
 * exited 0 (the harness then runs), throws SetupFailed when it exited otherwise, when the
 * session ended without a code, or at the timeout; the session is stopped before the throw.
 */
export async function awaitSetup(runtime: Runtime, handle: RuntimeHandle, home: string, plan: SetupPlan, secrets: string[], pollMs = 250): Promise<void> {
  const deadline = Date.now() + plan.timeoutMs
  const what = plan.from === '.svc/setup' ? 'the setup (.svc/setup)' : 'the setup (workspace.setup)'
  let why: string | null = null
  for (let tick = 0; ; tick++) {
    const code = readSetupStatus(home)
    if (code === 0) return clearSetupStatus(home)
    if (code !== null) {
      why = `${what} exited with code ${code}`
      break
    }
    if (Date.now() > deadline) {
      why = `${what} did not finish within ${Math.round(plan.timeoutMs / 1000)} s (workspace.setup_timeout)`
      break
    }
    // The session itself, every second: a setup killed from outside writes no code.
    if (tick % Math.max(1, Math.round(1000 / pollMs)) === 0 && !(await runtime.isRunning(handle).catch(() => true))) {
      const late = readSetupStatus(home)
      if (late === 0) return clearSetupStatus(home)
      why = late !== null ? `${what} exited with code ${late}` : `${what} ended without an exit code (its session is gone)`
      break
    }
    await new Promise((r) => setTimeout(r, pollMs))
  }
  const tail = logTail(await logOf(runtime, handle), secrets)
  await runtime.stop(handle).catch(() => {})
  throw new SetupFailed(tail ? `${why}; its last lines:\n${tail}` : why)
}
