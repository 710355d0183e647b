/**
 * Runs an external program without a shell and reports failures with its stderr. Commands run
 * in svc's process spawner when it is up (spawner.ts: no fork of the Hub), else here; both run
 * them the same way.
 */
import {spawn} from 'node:child_process'
import {runChild} from './run-child.js'
import {runInSpawner} from './spawner.js'

export interface RunResult {
  code: number
  stdout: Buffer
  stderr: string
  /** Set when `maxStdoutBytes` cut the output (the program was then killed). */
  truncated?: boolean
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv
  /** Working directory (default: the broker's). */
  cwd?: string
  /** Bytes written to the program's stdin (then closed). */
  input?: Buffer | string
  /** Kills the program after this many milliseconds (reported as a failure). */
  timeoutMs?: number
  signal?: AbortSignal
  /**
   * Keeps at most this many bytes of stdout, then kills the program (a huge diff must not fill
   * the memory). The result is then `truncated` and its code whatever the kill gave.
   */
  maxStdoutBytes?: number
}

export class CommandError extends Error {
  constructor(
    message: string,
    readonly result?: RunResult,
  ) {
    super(message)
    this.name = 'CommandError'
  }
}

/** The spawn's failure as runCommand reports it. */
function spawnFailure(file: string, e: {code?: string; message: string}): CommandError {
  return e.code === 'ENOENT' ? new CommandError(`${file} is not installed or not on PATH`) : new CommandError(`${file} could not be run: ${e.message}`)
}

/** Runs `file args`; resolves with the exit code and output whatever the code (never rejects on a non-zero exit). */
export function runCommand(file: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const there = runInSpawner(file, args, opts)
  if (!there) return runHere(file, args, opts)
  return there.catch((e: {code?: string; message: string}) => {
    throw spawnFailure(file, e)
  })
}

/** runCommand in this process (the spawner runs the same runChild). */
export function runHere(file: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const q = {file, args, env: opts.env ?? process.env, cwd: opts.cwd, input: opts.input, timeoutMs: opts.timeoutMs, maxStdoutBytes: opts.maxStdoutBytes, signal: opts.signal}
    runChild(spawn, q, (m) => (m.error ? reject(spawnFailure(file, m.error)) : resolve(m.result)))
  })
}

/** Like runCommand, but a non-zero exit rejects with `<what> failed: <stderr>`. */
export async function runChecked(file: string, args: string[], what: string, opts: RunOptions = {}): Promise<Buffer> {
  const r = await runCommand(file, args, opts)
  if (r.code !== 0) throw new CommandError(`${what} failed: ${r.stderr || `${file} exited with code ${r.code}`}`, r)
  return r.stdout
}
