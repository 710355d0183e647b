/**
 * A small long-lived Node process that starts the programs the Hub and its co-located broker run
 * (git, tmux, bwrap's checks), so that no process is forked from the Hub itself: a fork copies
 * the forking process's page tables and the parent waits until the child has exec'd, which in a
 * Hub of a few hundred MB held its event loop 15-30 ms per process (Hub CPU profile of the agents
 * bench at load ~7: the five processes of an agent's start spent ~110 ms in ChildProcess.spawn),
 * against ~6 ms from a bare Node. Each command is sent whole over the IPC channel (argv array,
 * environment, working directory, stdin, limits) and run there exactly as run-command.ts runs it
 * here; the answer is the same RunResult. The spawner holds no state of its own and takes
 * commands only from the Hub that started it (its inherited IPC channel); it exits when that
 * channel closes. It is started on the first command (which runs here meanwhile); while it is
 * not ready, when it is gone, and with SVC_SPAWNER=0, commands run here as before. Node runs it
 * with `-e`; the single executable, which runs only its own loader whatever its argv, with the
 * argv SPAWNER_ARGV and the program in SPAWNER_PROGRAM_ENV (scripts/build-binary.mjs).
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {runChild} from './run-child.js'
import type {RunOptions, RunResult} from './run-command.js'

/**
 * The spawner's program (run by `node -e`): runChild (run-child.ts), the same function
 * run-command.ts's runHere calls, on each command the Hub sends; a `kill` message stops one.
 */
const PROGRAM = `'use strict'
const {spawn} = require('node:child_process')
process.title = 'svc-spawner'
const runChild = ${runChild.toString()}
const running = new Map()
process.on('message', (q) => {
  if (q.kill) return running.get(q.id)?.kill('SIGTERM')
  const child = runChild(spawn, q, (m) => {
    running.delete(q.id)
    process.send(Object.assign({id: q.id}, m))
  })
  if (child) running.set(q.id, child)
})
process.on('disconnect', () => process.exit(0))
process.send({ready: true})
`

type Answer = {id: number; result?: RunResult & {stdout: Uint8Array}; error?: {code?: string; message: string}}
interface Pending {
  resolve(r: RunResult): void
  reject(e: {code?: string; message: string}): void
}

let child: ChildProcess | undefined
let ready = false
/** Set once the spawner cannot be used in this process (not startable, or gone): commands run here. */
let off = process.env.SVC_SPAWNER === '0'
let nextId = 1
const pending = new Map<number, Pending>()

/** What the single executable's loader runs as the spawner: this argv, with an IPC channel, runs the program in this variable. */
export const SPAWNER_ARGV = '__svc-spawner'
export const SPAWNER_PROGRAM_ENV = 'SVC_SPAWNER_PROGRAM'

/**
 * Whether this process's program is Node itself, which runs the spawner with `-e`; otherwise it
 * is the single executable (dist/svc). Should that guess be wrong, the child exits without
 * saying ready and commands run here.
 */
const isNode = () => /(^|\/)node(js)?[0-9.-]*$/.test(process.execPath)

function start(): void {
  // Node's own options (NODE_OPTIONS: a --require, an inspector) are not the spawner's business.
  const [args, env] = !isNode() ? [[SPAWNER_ARGV], {PATH: process.env.PATH ?? '', [SPAWNER_PROGRAM_ENV]: PROGRAM}] : [['-e', PROGRAM], {PATH: process.env.PATH ?? ''}]
  const c = spawn(process.execPath, args, {stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'advanced', env})
  child = c
  c.on('message', (m: Answer & {ready?: boolean}) => {
    if (m.ready) return void (ready = true)
    const p = pending.get(m.id)
    if (!p) return
    pending.delete(m.id)
    if (pending.size === 0) c.channel?.unref()
    if (m.error) p.reject(m.error)
    else p.resolve({...m.result!, stdout: Buffer.from(m.result!.stdout.buffer, m.result!.stdout.byteOffset, m.result!.stdout.byteLength)})
  })
  const gone = () => {
    off = true
    ready = false
    child = undefined
    for (const p of pending.values()) p.reject({message: "svc's process spawner exited before the command finished"})
    pending.clear()
  }
  c.on('exit', gone)
  c.on('error', gone)
  // The spawner never keeps the Hub (or a test) alive: only a command waiting for it does.
  c.unref()
  c.channel?.unref()
}

/**
 * Runs the command in the spawner and answers its result, or undefined when the spawner cannot
 * take it now (the caller runs it itself). An error is `{code, message}` of the spawn's error.
 */
export function runInSpawner(file: string, args: string[], opts: RunOptions): Promise<RunResult> | undefined {
  if (off || opts.signal) return undefined
  if (!child) start()
  if (!ready || !child?.connected) return undefined
  const id = nextId++
  const c = child
  return new Promise<RunResult>((resolve, reject) => {
    pending.set(id, {resolve, reject})
    if (pending.size === 1) c.channel?.ref()
    // Everything the command depends on is sent: the spawner's own environment and directory are not used.
    c.send({id, file, args, env: opts.env ?? {...process.env}, cwd: opts.cwd ?? process.cwd(), input: opts.input, timeoutMs: opts.timeoutMs, maxStdoutBytes: opts.maxStdoutBytes}, (err) => {
      if (!err || !pending.has(id)) return
      pending.delete(id)
      reject({message: `svc's process spawner did not take the command: ${err.message}`})
    })
  })
}

/** Starts the spawner now (a Hub at start-up, while it is small), so the first commands find it ready. */
export function warmSpawner(): void {
  if (!off && !child) start()
}

/** The spawner's process ID, or undefined (tests, the agents bench's CPU count). */
export const spawnerPid = (): number | undefined => (ready ? child?.pid : undefined)
