/**
 * How svc runs one external program and collects its result: the one piece of code both
 * run-command.ts (in this process) and svc's process spawner (spawner.ts, another process) run.
 * The spawner gets it as text (`runChild.toString()`), so the function uses nothing but its
 * parameters and Node's globals: no import, no helper of this module.
 */
import type {ChildProcess, spawn as nodeSpawn} from 'node:child_process'

export interface ChildRequest {
  file: string
  args: string[]
  env: NodeJS.ProcessEnv
  cwd?: string
  input?: Buffer | Uint8Array | string | null
  timeoutMs?: number
  maxStdoutBytes?: number
  /** Only in this process (a signal does not cross to the spawner). */
  signal?: AbortSignal
}

export type ChildAnswer =
  | {result: {code: number; stdout: Buffer; stderr: string; truncated?: boolean}; error?: undefined}
  | {error: {code?: string; message: string}; result?: undefined}

/**
 * Runs `q.file q.args` without a shell and calls `answer` once: the exit code (124 when killed at
 * its timeout, 128 for a signal), stdout (at most `maxStdoutBytes`, then the program is killed and
 * the result `truncated`) and stderr; or the spawn's error. Answers the child, if it started.
 */
export function runChild(spawn: typeof nodeSpawn, q: ChildRequest, answer: (m: ChildAnswer) => void): ChildProcess | undefined {
  let child: ChildProcess
  try {
    child = spawn(q.file, q.args, {env: q.env, cwd: q.cwd, stdio: ['pipe', 'pipe', 'pipe'], signal: q.signal})
  } catch (e) {
    answer({error: {code: (e as NodeJS.ErrnoException).code, message: (e as Error).message}})
    return undefined
  }
  const out: Buffer[] = []
  const err: Buffer[] = []
  let timedOut = false
  let outBytes = 0
  let truncated = false
  let answered = false
  const once = (m: ChildAnswer) => {
    if (answered) return
    answered = true
    answer(m)
  }
  const timer = q.timeoutMs
    ? setTimeout(() => {
        timedOut = true
        child.kill('SIGKILL')
      }, q.timeoutMs)
    : undefined
  child.stdout!.on('data', (c: Buffer) => {
    if (truncated) return
    const max = q.maxStdoutBytes
    if (max !== undefined && max !== null && outBytes + c.length > max) {
      out.push(c.subarray(0, max - outBytes))
      outBytes = max
      truncated = true
      child.kill('SIGKILL')
      return
    }
    out.push(c)
    outBytes += c.length
  })
  child.stderr!.on('data', (c: Buffer) => err.push(c))
  child.on('error', (e: NodeJS.ErrnoException) => {
    clearTimeout(timer)
    once({error: {code: e.code, message: e.message}})
  })
  child.on('close', (code: number | null, sig: NodeJS.Signals | null) => {
    clearTimeout(timer)
    const stderr = Buffer.concat(err).toString('utf8').trim()
    if (timedOut) return once({result: {code: 124, stdout: Buffer.concat(out), stderr: `${q.file} did not finish within ${q.timeoutMs} ms`}})
    const result: {code: number; stdout: Buffer; stderr: string; truncated?: boolean} = {code: code ?? (sig ? 128 : 1), stdout: Buffer.concat(out), stderr}
    if (truncated) result.truncated = true
    once({result})
  })
  // A program that exits before reading stdin closes the pipe: that is its business, not an error.
  child.stdin!.on('error', () => {})
  child.stdin!.end(q.input ?? undefined)
  return child
}
