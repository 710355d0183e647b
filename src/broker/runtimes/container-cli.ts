/**
 * `docker` and `podman` runtimes through their CLIs (same argv for both, bar the host flag and
 * the engine probe). No PTY on our side.
 *
 * Assumption: images carry `sh` and `tmux`. The container's main process (containerScript)
 * starts the harness in a detached tmux session `svc`, pipes the pane's raw output to its own
 * stdout (so `logs` shows what the harness printed, as the local runtime's log does) and lives
 * as long as the session. Keys, pastes and attach reach the harness with `exec ... tmux`
 * exactly as the local runtime does; attach is a tmux control-mode client over `exec -i`,
 * which needs no TTY on either side.
 */
import {spawn} from 'node:child_process'
import {randomUUID} from 'node:crypto'
import {baseImageTag} from '../images/base-recipe.js'
import type {AgentSpec, ExecSpec, KeyInput, Resources, Runtime, RuntimeHandle, TerminalStream} from '../runtime.js'
import {containerHostPlan, mountArgs, podmanEngineFlags, type HostPlan} from './container-host.js'
import {cpuCores, quantityBytes} from './quantity.js'
import {CommandError, runCommand, type RunResult} from './run-command.js'
import {childChannel, ControlModeTerminal} from './tmux-control.js'
import {captureArgs, checkEnvKey, directCommand, paneTarget, pasteArgs, sendKeysArgs, sessionNameFor, tmuxArg} from './tmux-args.js'

export type ContainerCli = 'docker' | 'podman'

/** Name of the tmux session inside every agent container. */
export const CONTAINER_SESSION = 'svc'
const TARGET = paneTarget(CONTAINER_SESSION)

export interface ContainerCliOptions {
  cli: ContainerCli
  /** Executable; default the CLI's name on PATH. */
  bin?: string
  /** Settings `runtimes.<name>.host`: daemon socket or TCP address. */
  host?: string
  /** Environment of the CLI; default process.env. */
  env?: NodeJS.ProcessEnv
  /** How long the engine probe of available() may take. */
  probeTimeoutMs?: number
  cols?: number
  rows?: number
  /** Settings `runtimes.<name>.image`: image of agents whose harness config names none. */
  defaultImage?: string
  /** The broker's directory for this runtime's files. */
  stateDir?: string
}

/** Flags before the subcommand that select the engine. */
export function globalArgs(cli: ContainerCli, host?: string): string[] {
  if (!host) return []
  return cli === 'docker' ? ['--host', host] : ['--url', host]
}

/** A command that exits 0 only when an engine answers (a bare CLI does not count). */
export function probeArgs(cli: ContainerCli): string[] {
  return cli === 'docker' ? ['version', '--format', '{{.Server.Version}}'] : ['info', '--format', '{{.Host.Arch}}']
}

/**
 * Variables that would change how the CLI itself behaves if set in its environment: these are
 * passed inline (`-e K=V`). All others go as `-e K` with the value in the CLI's environment,
 * which keeps secrets such as SVC_AUTH_TOKEN out of the process list.
 */
const CLI_SENSITIVE = /^(PATH|HOME|USER|TMPDIR|TERM|SHELL|LANG|LC_.*|LD_.*|DOCKER_.*|CONTAINER_.*|CONTAINERS_.*|XDG_.*|REGISTRY_AUTH_FILE|BUILDAH_.*|PODMAN_.*|HTTPS?_PROXY|NO_PROXY|https?_proxy|no_proxy|ALL_PROXY|all_proxy|SSL_CERT_.*|GODEBUG|GOMAXPROCS)$/

export interface RunPlan {
  args: string[]
  /** Extra environment of the CLI process (values of the `-e K` flags). */
  env: Record<string, string>
}

export function resourceArgs(r: Resources): string[] {
  const args = ['--cpus', String(cpuCores(r.cpu)), '--memory', String(quantityBytes(r.memory))]
  // Disk is not enforced: `--storage-opt size=` works only on some storage drivers and fails on the rest.
  if (r.gpu > 0) args.push('--gpus', String(r.gpu))
  return args
}

/** argv of `run` for an agent (after globalArgs); `host` adds the mounts, flags and env of containerHostPlan. */
export function runArgs(spec: AgentSpec, size: {cols: number; rows: number}, host?: HostPlan): RunPlan {
  if (!spec.image) throw new Error(`agent ${spec.agentId} has no container image: set \`image\` in its harness config`)
  const name = sessionNameFor(spec.agentId)
  const args = ['run', '-d', '--name', name, '--label', `svc.agent=${spec.agentId}`, '--label', `svc.project=${spec.projectId}`]
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries({...spec.env, ...host?.env})) {
    checkEnvKey(k)
    if (CLI_SENSITIVE.test(k)) args.push('-e', `${k}=${v}`)
    else {
      args.push('-e', k)
      env[k] = v
    }
  }
  args.push(...resourceArgs(spec.resources))
  if (host) args.push(...host.flags, ...mountArgs(host.mounts))
  if (spec.workdir) args.push('-w', spec.workdir)
  args.push(spec.image, ...inContainerCommand([...(spec.prelude ?? []), ...spec.command], size))
  return {args, env}
}

/**
 * The container's main process (POSIX sh; the harness argv follows as "$@"): the harness in a
 * detached tmux session; pipe-pane feeds the pane's raw output through a FIFO to a `cat` that
 * holds this process's stdout (whatever kind of file that is), and the process ends once the
 * session has and the output is drained. A TERM (docker stop) ends the session too.
 */
export function containerScript(size: {cols: number; rows: number}): string {
  const cols = Number(size.cols)
  const rows = Number(size.rows)
  if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols < 1 || rows < 1) throw new Error(`terminal size ${size.cols}x${size.rows} is not valid`)
  return [
    `out=/tmp/svc-pane.$$`,
    `trap 'tmux kill-server 2>/dev/null; rm -f "$out"; exit 143' TERM INT`,
    `rm -f "$out" && mkfifo "$out" || exit 1`,
    `cat "$out" &`,
    `tmux new-session -d -s ${CONTAINER_SESSION} -x ${cols} -y ${rows} -- "$@" \\; pipe-pane -o -t ${TARGET} "cat >> '$out'" || exit 1`,
    `while tmux has-session -t =${CONTAINER_SESSION} 2>/dev/null; do sleep 1; done`,
    `wait`,
    `rm -f "$out"`,
  ].join('\n')
}

/** The container's command: containerScript with the harness argv (escaped for tmux) as its arguments. */
export function inContainerCommand(command: string[], size: {cols: number; rows: number}): string[] {
  return ['/bin/sh', '-c', containerScript(size), 'svc-harness', ...directCommand(command).map(tmuxArg)]
}

export function stopArgs(name: string): string[] {
  return ['rm', '-f', name]
}

export function inspectRunningArgs(name: string): string[] {
  return ['inspect', '--format', '{{.State.Running}}', name]
}

export function logsArgs(name: string, follow: boolean): string[] {
  return follow ? ['logs', '--follow', name] : ['logs', name]
}

/** `exec` of tmux in the container; `-i` when stdin carries data. */
export function execTmuxArgs(name: string, tmuxArgs: string[], stdin = false): string[] {
  return ['exec', ...(stdin ? ['-i'] : []), '-e', 'TERM=xterm-256color', name, 'tmux', ...tmuxArgs]
}

export function attachArgs(name: string): string[] {
  return execTmuxArgs(name, ['-C', 'attach-session', '-t', `=${CONTAINER_SESSION}`], true)
}

const REF = /^svc-[A-Za-z0-9][A-Za-z0-9_-]*$/

export class ContainerCliRuntime implements Runtime {
  readonly type: ContainerCli
  private readonly bin: string
  private readonly env: NodeJS.ProcessEnv
  private readonly global: string[]

  constructor(private readonly opts: ContainerCliOptions) {
    this.type = opts.cli
    this.bin = opts.bin ?? opts.cli
    this.env = opts.env ?? process.env
    this.global = [...globalArgs(opts.cli, opts.host), ...(opts.cli === 'podman' && !opts.host ? podmanEngineFlags(this.env) : [])]
  }

  async available(): Promise<boolean> {
    try {
      // podman info takes 5 s on a loaded machine: a short probe would call a working engine absent.
      const r = await runCommand(this.bin, [...this.global, ...probeArgs(this.opts.cli)], {env: this.env, timeoutMs: this.opts.probeTimeoutMs ?? 20_000})
      return r.code === 0 && r.stdout.toString('utf8').trim() !== ''
    } catch {
      return false
    }
  }

  async start(spec: AgentSpec): Promise<RuntimeHandle> {
    const image = await this.imageFor(spec)
    // With a state dir (every broker), the agent's paths and the svc program are mounted in.
    const host = this.opts.stateDir ? containerHostPlan(this.opts.cli, spec, this.opts.stateDir) : undefined
    const plan = runArgs({...spec, image}, {cols: this.opts.cols ?? 200, rows: this.opts.rows ?? 50}, host)
    await this.checked(plan.args, `starting agent ${spec.agentId} with ${this.bin}`, {env: {...this.env, ...plan.env}})
    return {runtime: this.type, ref: sessionNameFor(spec.agentId), image, sandbox: 'container'}
  }

  /**
   * The harness config's image, else the runtime's `image` setting, else the agent base image
   * when `svc image build` has made it; otherwise a refusal that names what to set, before any
   * container exists.
   */
  async imageFor(spec: AgentSpec): Promise<string> {
    if (spec.image) return spec.image
    if (this.opts.defaultImage) return this.opts.defaultImage
    const base = baseImageTag()
    if ((await this.run(['image', 'inspect', '--format', '{{.Id}}', base]).catch(() => ({code: 1}))).code === 0) return base
    throw new Error(`agent ${spec.agentId} has no container image: its harness config names none, the ${this.type} runtime has no \`image\` setting, and the agent base image ${base} is not built; run \`svc image build\`, or set \`image\` in the harness config (harness_configs.<config>.image) or in settings runtimes.<name>.image`)
  }

  async stop(handle: RuntimeHandle): Promise<void> {
    const name = this.ref(handle)
    const r = await this.run(stopArgs(name))
    if (r.code !== 0 && !/no such (container|object)|does not exist/i.test(r.stderr)) throw new Error(`removing container ${name} failed: ${r.stderr}`)
  }

  async isRunning(handle: RuntimeHandle): Promise<boolean> {
    const r = await this.run(inspectRunningArgs(this.ref(handle)))
    return r.code === 0 && r.stdout.toString('utf8').trim() === 'true'
  }

  /**
   * The container's first process on this host (`--network host`: its ports are found in the
   * host's socket table among its processes' sockets, src/broker/ports); null for an engine on
   * another host (its processes are not here).
   */
  async agentProcess(handle: RuntimeHandle): Promise<{pid: number; excludePorts: number[]} | null> {
    if (this.opts.host) return null
    const r = await this.run(['inspect', '--format', '{{.State.Pid}}', this.ref(handle)])
    const pid = r.code === 0 ? Number(r.stdout.toString('utf8').trim()) : 0
    return pid > 0 ? {pid, excludePorts: []} : null
  }

  async terminalReady(handle: RuntimeHandle): Promise<boolean> {
    const name = this.ref(handle)
    if (!(await this.isRunning(handle))) return false
    const r = await this.run(execTmuxArgs(name, ['display-message', '-p', '-t', TARGET, '#{pane_dead}']))
    return r.code === 0 && r.stdout.toString('utf8').trim() === '0'
  }

  logs(handle: RuntimeHandle, opts: {follow: boolean; signal?: AbortSignal}): AsyncIterable<Buffer> {
    return streamProcess(this.bin, [...this.global, ...logsArgs(this.ref(handle), opts.follow)], this.env, opts.signal, `${this.bin} logs`)
  }

  async sendKeys(handle: RuntimeHandle, input: KeyInput): Promise<void> {
    const name = this.ref(handle)
    await this.checked(execTmuxArgs(name, sendKeysArgs(TARGET, input)), `sending keys to ${name}`)
  }

  async capture(handle: RuntimeHandle): Promise<string> {
    const name = this.ref(handle)
    const r = await this.run(execTmuxArgs(name, captureArgs(TARGET)))
    if (r.code !== 0) throw new CommandError(`reading the screen of ${name} failed: ${r.stderr || `${this.bin} exited with code ${r.code}`}`, r)
    return r.stdout.toString('utf8')
  }

  async paste(handle: RuntimeHandle, text: string, opts: {noEnter?: boolean} = {}): Promise<void> {
    const name = this.ref(handle)
    if (text !== '') {
      const buffer = `svc-paste-${randomUUID()}`
      await this.checked(execTmuxArgs(name, pasteArgs(TARGET, buffer), true), `pasting into ${name}`, {input: Buffer.from(text, 'utf8')})
    }
    if (!opts.noEnter) await this.checked(execTmuxArgs(name, sendKeysArgs(TARGET, {key: 'Enter'})), `pressing Enter in ${name}`)
  }

  async attach(handle: RuntimeHandle, opts: {cols: number; rows: number}): Promise<TerminalStream> {
    const name = this.ref(handle)
    if (!(await this.isRunning(handle))) throw new Error(`cannot attach: container ${name} is not running`)
    const child = spawn(this.bin, [...this.global, ...attachArgs(name)], {env: this.env, stdio: ['pipe', 'pipe', 'pipe']})
    const stderr: Buffer[] = []
    child.stderr.on('data', (c: Buffer) => stderr.push(c))
    const term = new ControlModeTerminal(childChannel(child), TARGET)
    try {
      await term.start(opts.cols, opts.rows)
    } catch (e) {
      child.kill('SIGKILL')
      const why = Buffer.concat(stderr).toString('utf8').trim() || (e as Error).message
      throw new Error(`attaching to ${name} failed (the image must provide tmux): ${why}`)
    }
    return term
  }

  private ref(handle: RuntimeHandle): string {
    if (handle.runtime !== this.type) throw new Error(`a ${handle.runtime} handle was given to the ${this.type} runtime`)
    if (!REF.test(handle.ref)) throw new Error(`${JSON.stringify(handle.ref)} is not a container name of the ${this.type} runtime`)
    return handle.ref
  }

  engine() {
    return {bin: this.bin, global: this.global, env: this.env}
  }

  /** One command in the agent's running container (its own mounts, as its harness sees them). */
  async exec(handle: RuntimeHandle | null, spec: ExecSpec, argv: string[], opts: {timeoutMs?: number} = {}): Promise<RunResult> {
    if (!handle) throw new Error(`the agent's container is not running: start the agent to run a command in it`)
    return runCommand(this.bin, [...this.global, 'exec', '-w', spec.workdir, '-e', `HOME=${spec.home}`, this.ref(handle), ...argv], {env: this.env, timeoutMs: opts.timeoutMs ?? 120_000})
  }

  private run(args: string[], extra: {env?: NodeJS.ProcessEnv; input?: Buffer} = {}) {
    return runCommand(this.bin, [...this.global, ...args], {env: extra.env ?? this.env, input: extra.input, timeoutMs: 60_000})
  }

  private async checked(args: string[], what: string, extra: {env?: NodeJS.ProcessEnv; input?: Buffer} = {}): Promise<void> {
    const r = await this.run(args, extra)
    if (r.code !== 0) throw new CommandError(`${what} failed: ${r.stderr || `${this.bin} exited with code ${r.code}`}`, r)
  }
}

/** A process's stdout as a byte stream, ended by the process or the signal; a failed exit rejects with its stderr. */
export async function* streamProcess(bin: string, args: string[], env: NodeJS.ProcessEnv, signal: AbortSignal | undefined, what: string): AsyncGenerator<Buffer> {
  if (signal?.aborted) return
  const child = spawn(bin, args, {env, stdio: ['ignore', 'pipe', 'pipe']})
  const queue: Buffer[] = []
  const stderr: Buffer[] = []
  let done = false
  let failure: Error | undefined
  let wake: (() => void) | undefined
  const notify = () => {
    wake?.()
    wake = undefined
  }
  // An abort ends the stream at once, without waiting for the process to close its pipes.
  const onAbort = () => {
    child.kill('SIGTERM')
    done = true
    notify()
  }
  signal?.addEventListener('abort', onAbort, {once: true})
  child.stdout.on('data', (c: Buffer) => (queue.push(c), notify()))
  child.stderr.on('data', (c: Buffer) => stderr.push(c))
  child.on('error', (e: NodeJS.ErrnoException) => {
    failure = new Error(e.code === 'ENOENT' ? `${bin} is not installed or not on PATH` : `${what} failed: ${e.message}`)
    done = true
    notify()
  })
  child.on('close', (code) => {
    if (code !== 0 && !signal?.aborted && !failure) {
      failure = new Error(`${what} failed: ${Buffer.concat(stderr).toString('utf8').trim() || `exit code ${code}`}`)
    }
    done = true
    notify()
  })
  try {
    for (;;) {
      while (queue.length && !signal?.aborted) yield queue.shift() as Buffer
      if (done || signal?.aborted) break
      await new Promise<void>((r) => (wake = r))
    }
    if (failure && !signal?.aborted) throw failure
  } finally {
    signal?.removeEventListener('abort', onAbort)
    if (child.exitCode === null) child.kill('SIGTERM')
  }
}
