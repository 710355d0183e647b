/**
 * Runs an external program without a shell and reports failures with its stderr. Commands run
 * in svc's process spawner when it is up (spawner.ts: no fork of the Hub), else here; both run
 * them the same way.
 */
import {spawn} from 'node:child_process'
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

/** runCommand in this process (the spawner's PROGRAM does the same steps). */
export function runHere(file: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {env: opts.env ?? process.env, cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'], signal: opts.signal})
    const out: Buffer[] = []
    const err: Buffer[] = []
    let timedOut = false
    let outBytes = 0
    let truncated = false
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          timedOut = true
          child.kill('SIGKILL')
        }, opts.timeoutMs)
      : undefined
    child.stdout.on('data', (c: Buffer) => {
      if (truncated) return
      const max = opts.maxStdoutBytes
      if (max !== undefined && outBytes + c.length > max) {
        out.push(c.subarray(0, max - outBytes))
        outBytes = max
        truncated = true
        child.kill('SIGKILL')
        return
      }
      out.push(c)
      outBytes += c.length
    })
    child.stderr.on('data', (c: Buffer) => err.push(c))
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      reject(spawnFailure(file, e))
    })
    child.on('close', (code, sig) => {
      clearTimeout(timer)
      const stderr = Buffer.concat(err).toString('utf8').trim()
      if (timedOut) return resolve({code: 124, stdout: Buffer.concat(out), stderr: `${file} did not finish within ${opts.timeoutMs} ms`})
      resolve({code: code ?? (sig ? 128 : 1), stdout: Buffer.concat(out), stderr, ...(truncated && {truncated})})
    })
    // A program that exits before reading stdin closes the pipe: that is its business, not an error.
    child.stdin.on('error', () => {})
    child.stdin.end(opts.input ?? undefined)
  })
}

/** Like runCommand, but a non-zero exit rejects with `<what> failed: <stderr>`. */
export async function runChecked(file: string, args: string[], what: string, opts: RunOptions = {}): Promise<Buffer> {
  const r = await runCommand(file, args, opts)
  if (r.code !== 0) throw new CommandError(`${what} failed: ${r.stderr || `${file} exited with code ${r.code}`}`, r)
  return r.stdout
}
