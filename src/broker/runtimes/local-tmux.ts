/**
 * The `local` runtime: each agent's harness runs on the broker's host in its own tmux session
 * `svc-<agentId>`, on svc's own tmux server (`-L svc`, never the user's default one). tmux is
 * driven through argv (never a shell string) with the broker's environment, so TMUX_TMPDIR
 * chooses where that server's socket is.
 */
import {spawn} from 'node:child_process'
import {randomUUID} from 'node:crypto'
import {mkdir, rm, writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import type {AgentSpec, ExecSpec, KeyInput, Runtime, RuntimeHandle, TerminalStream} from '../runtime.js'
import {bwrapProblem, findExecutable, hostSystemPaths} from '../sandbox/host.js'
import {egressPorts, releaseIsolation, resumeIsolation, type IsolationSettings} from '../sandbox/isolation.js'
import {bwrapArgs} from '../sandbox/policy.js'
import {followFile} from './follow-file.js'
import {sandboxedLaunch} from './local-sandbox.js'
import {CommandError, runCommand, type RunResult} from './run-command.js'
import {childChannel, ControlModeTerminal} from './tmux-control.js'
import {listPanes} from './tmux-panes.js'
import {defaultServerMayRun, tmuxServerMayRun} from './tmux-default-socket.js'
import {captureArgs, envFileContent, keepServerArgs, newSessionArgs, niceCommand, paneTarget, pasteArgs, sendKeysArgs, SEP, sessionNameFor, SVC_TMUX_SOCKET} from './tmux-args.js'

export {canonicalKey, isNamedKey, NAMED_KEYS} from './keys.js'

export interface LocalTmuxOptions {
  /** Directory for per-agent output logs (`<stateDir>/svc-<agentId>.log`); created when missing. */
  stateDir: string
  /** tmux executable; default `tmux` from PATH. */
  tmux?: string
  /** Environment of every tmux call and so of a tmux server this runtime starts; default process.env. */
  env?: NodeJS.ProcessEnv
  /** Size of a new session's window before anyone attaches; default 200x50. */
  cols?: number
  rows?: number
  /** Poll interval of followed logs. */
  pollMs?: number
  /**
   * tmux socket name (`-L`, under TMUX_TMPDIR), to keep agents off the user's own tmux server;
   * default `svc` (SVC_TMUX_SOCKET), with which sessions an older svc started on the default
   * socket are still found, driven and stopped there (see `legacy`).
   */
  socketName?: string
  /**
   * `bubblewrap`: each harness runs in a bubblewrap sandbox (sandbox/policy.ts) with only the agent
   * environment; `none`: it runs as the broker's user with the broker's environment. The class
   * default is `none`; settings (`runtimes.<name>.sandbox`) default to `bubblewrap`.
   */
  sandbox?: 'bubblewrap' | 'none'
  /** With the sandbox: names of broker environment variables the agent receives too. */
  envPassthrough?: string[]
  /**
   * Nice value of each agent's session (NICE_LOADER in tmux-args.ts), 0-19. The class default is
   * 0; settings (`runtimes.<name>.nice`) default to 10.
   */
  nice?: number
  /** bwrap executable; default `bwrap` from PATH. */
  bwrap?: string
  /**
   * With the sandbox: the agent's network (`isolated`: its own namespace reaching only its
   * allowed destinations, sandbox/egress-plan.ts; `host`, the class default: the host's), whether
   * a root broker runs it as an unprivileged uid in a user namespace (`required`, the class
   * default), the extra `host:port` pairs it may reach, and the runtime's settings name.
   */
  isolation?: Partial<IsolationSettings>
}

const REF = /^svc-[A-Za-z0-9][A-Za-z0-9_-]*$/
/** How long prepareStart's answer serves start() (the workspace is made meanwhile). */
const ASKED_FOR_MS = 60_000
const SERVER_GONE = /server exited unexpectedly|lost server|server exited/i

export class LocalTmuxRuntime implements Runtime {
  readonly type = 'local' as const
  private readonly tmux: string
  private readonly env: NodeJS.ProcessEnv
  /** Arguments before every tmux command (the socket). */
  private readonly base: string[]
  /**
   * Whether sessions on the default socket are looked for too: those of an svc from before the
   * named socket, whose agents ran on there across the upgrade. Only with the default name.
   */
  private readonly adoptLegacy: boolean
  /** Sessions found on the default socket (an older svc's); driven there until they end. */
  private readonly legacy = new Set<string>()
  /** Answers of prepareStart, by session, for start(). */
  private readonly asked = new Map<string, {at: number; answer: Promise<{exists: boolean}>}>()

  constructor(private readonly opts: LocalTmuxOptions) {
    this.tmux = opts.tmux ?? 'tmux'
    this.base = ['-L', opts.socketName ?? SVC_TMUX_SOCKET]
    this.adoptLegacy = opts.socketName === undefined
    const env = {...(opts.env ?? process.env)}
    // Inside a tmux session $TMUX names that server's socket and would override TMUX_TMPDIR:
    // every call here must reach the same server, chosen by TMUX_TMPDIR alone.
    delete env.TMUX
    delete env.TMUX_PANE
    this.env = env
  }

  async available(): Promise<boolean> {
    try {
      return (await runCommand(this.tmux, ['-V'], {env: this.env, timeoutMs: 5000})).code === 0
    } catch {
      return false
    }
  }

  /**
   * start()'s first question, whether the session exists (a tmux process when svc's server runs,
   * as it does between agents: keepServerArgs; the server started when none runs), asked while
   * the broker makes the agent's workspace; start() takes the answer when under a minute old.
   */
  prepareStart(agentId: string): void {
    let session: string
    try {
      session = sessionNameFor(agentId)
    } catch {
      return // start() refuses it
    }
    const now = Date.now()
    // Answers start() never took (a start that failed before it): dropped once too old to be used.
    for (const [s, a] of this.asked) if (now - a.at >= ASKED_FOR_MS) this.asked.delete(s)
    const answer = this.existing(session)
    answer.catch(() => {})
    this.asked.set(session, {at: now, answer})
  }

  private async existing(session: string): Promise<{exists: boolean}> {
    const serverRan = await tmuxServerMayRun(this.env, this.base[1]!)
    // No server: one is started now, kept for the agents after this one (keepServerArgs), with
    // no session, so its argv (which `ps` shows for its whole life) is not this agent's command.
    if (!serverRan) await this.run(['start-server', SEP, ...keepServerArgs(this.tmux, process.pid)]).catch(() => {})
    return {exists: await this.sessionExists(session, serverRan)}
  }

  async start(spec: AgentSpec): Promise<RuntimeHandle> {
    const session = sessionNameFor(spec.agentId)
    const sandbox = this.opts.sandbox ?? 'none'
    const handle: RuntimeHandle = {runtime: 'local', ref: session, sandbox}
    const asked = this.asked.get(session)
    this.asked.delete(session)
    const {exists} = await (asked && Date.now() - asked.at < ASKED_FOR_MS ? asked.answer : this.existing(session))
    if (exists) throw new Error(`agent ${spec.agentId} already has a tmux session (${session}); stop it first`)
    // Private: the env files hold the agent's token until its shell has read them.
    await mkdir(this.opts.stateDir, {recursive: true, mode: 0o700})
    try {
      const launch = sandbox === 'bubblewrap' ? await sandboxedLaunch(this.opts, this.env, spec, session, this.sandboxDir(session)) : {command: niceCommand([...(spec.prelude ?? []), ...spec.command], this.opts.nice ?? 0), env: spec.env}
      return await this.startSession(spec, session, sandbox, launch, handle)
    } catch (err) {
      // The broker's side of the agent's network, opened by sandboxedLaunch(), goes with the start.
      await releaseIsolation(this.sandboxDir(session))
      throw err
    }
  }

  private async startSession(spec: AgentSpec, session: string, sandbox: string, launch: {command: string[]; env: Record<string, string>}, handle: RuntimeHandle): Promise<RuntimeHandle> {
    const logFile = this.logFile(session)
    const envFile = this.envFile(session)
    await writeFile(logFile, '', {mode: 0o600})
    await rm(envFile, {force: true})
    await writeFile(envFile, envFileContent(launch.env), {mode: 0o600})
    const args = newSessionArgs({
      session,
      cols: this.opts.cols ?? 200,
      rows: this.opts.rows ?? 50,
      env: launch.env,
      command: launch.command,
      workdir: spec.workdir,
      logFile,
      envFile,
      cleanEnv: sandbox === 'bubblewrap',
    })
    for (let attempt = 1; ; attempt++) {
      const r = await this.run(args)
      if (r.code === 0) return handle
      // A tmux server whose last session just ended is shutting down and drops new clients
      // ("server exited unexpectedly"); a moment later a fresh server starts cleanly.
      if (attempt < 4 && SERVER_GONE.test(r.stderr) && !(await this.sessionExists(session))) {
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt))
        continue
      }
      await rm(logFile, {force: true})
      await rm(envFile, {force: true})
      throw new CommandError(`starting agent ${spec.agentId} in tmux failed: ${r.stderr || `tmux exited with code ${r.code}`}`, r)
    }
  }

  /**
   * One command in a fresh sandbox of the agent's (sandbox/policy.ts: its work tree, repository
   * and HOME, the checkout's objects read-only, no network): the agent's own configuration may
   * run, as it would in its session, never on the host. Unsandboxed runtimes run it as the
   * agent's session would run (`sandbox: none`, on purpose).
   */
  async exec(_handle: RuntimeHandle | null, spec: ExecSpec, argv: string[], opts: {timeoutMs?: number} = {}): Promise<RunResult> {
    const env = {PATH: this.env.PATH || '/usr/local/bin:/usr/bin:/bin', LANG: this.env.LANG || 'C.UTF-8', HOME: spec.home, TMPDIR: '/tmp'}
    if (this.opts.sandbox !== 'bubblewrap') return runCommand(argv[0]!, argv.slice(1), {env, cwd: spec.workdir, timeoutMs: opts.timeoutMs ?? 120_000})
    const bwrap = findExecutable(this.opts.bwrap ?? 'bwrap', this.env.PATH)
    const problem = bwrap ? await bwrapProblem(bwrap) : 'bwrap is not installed or not on PATH'
    if (problem) throw new Error(`running a command in the agent's sandbox needs bwrap: ${problem}`)
    const {system, masked} = hostSystemPaths()
    const args = bwrapArgs({workdir: spec.workdir, home: spec.home, writable: spec.writablePaths, readable: spec.readablePaths, system, masked, network: 'isolated'})
    return runCommand(bwrap!, [...args, '--', ...argv], {env, timeoutMs: opts.timeoutMs ?? 120_000})
  }

  async stop(handle: RuntimeHandle): Promise<void> {
    const session = this.ref(handle)
    this.asked.delete(session)
    await this.sessionExists(session)
    const r = await this.runFor(session, ['kill-session', '-t', `=${session}`])
    if (r.code !== 0 && (await this.sessionExists(session))) throw new Error(`stopping tmux session ${session} failed: ${r.stderr}`)
    await rm(this.logFile(session), {force: true})
    // Normally already gone (the loader deletes it); not when the command never ran.
    await rm(this.envFile(session), {force: true})
    await releaseIsolation(this.sandboxDir(session))
  }

  async isRunning(handle: RuntimeHandle): Promise<boolean> {
    const alive = (await this.paneState(this.ref(handle))) === 'alive'
    if (alive) await this.keepNetwork(handle.ref)
    return alive
  }

  /** An agent found running gets its network's broker-side sockets again if this process lacks them (a restarted broker). */
  private async keepNetwork(session: string): Promise<void> {
    await resumeIsolation(this.sandboxDir(session)).catch(() => {})
  }

  /** The agent's sandbox directory (Unix sockets of its network, its passwd): bound read-only inside. */
  private sandboxDir(session: string): string {
    return join(this.opts.stateDir, 'sb', session)
  }

  /** One `list-panes -a` for all the handles; no tmux server means none runs. */
  async areRunning(handles: RuntimeHandle[]): Promise<boolean[]> {
    const sessions = handles.map((h) => this.ref(h))
    const dead = await listPanes(this.tmux, this.env, this.base)
    // Sessions not on svc's socket may be an older svc's on the default one (one more call, only then).
    const missing = sessions.filter((s) => !dead.has(s))
    if (this.adoptLegacy && missing.length) {
      const old = await listPanes(this.tmux, this.env, [])
      for (const s of missing) {
        if (!old.has(s)) continue
        dead.set(s, old.get(s)!)
        this.legacy.add(s)
      }
    }
    const alive = sessions.map((s) => dead.get(s) === false)
    for (const [i, s] of sessions.entries()) if (alive[i]) await this.keepNetwork(s)
    return alive
  }

  async terminalReady(handle: RuntimeHandle): Promise<boolean> {
    return (await this.paneState(this.ref(handle))) === 'alive'
  }

  logs(handle: RuntimeHandle, opts: {follow: boolean; signal?: AbortSignal}): AsyncIterable<Buffer> {
    const session = this.ref(handle)
    return followFile(this.logFile(session), {
      follow: opts.follow,
      signal: opts.signal,
      pollMs: this.opts.pollMs,
      isAlive: async () => (await this.paneState(session)) === 'alive',
    })
  }

  async sendKeys(handle: RuntimeHandle, input: KeyInput): Promise<void> {
    const session = this.ref(handle)
    const args = sendKeysArgs(paneTarget(session), input)
    await this.requireAlive(session)
    await this.tmuxChecked(session, args, `sending keys to ${session}`)
  }

  async capture(handle: RuntimeHandle): Promise<string> {
    const session = this.ref(handle)
    await this.sessionExists(session)
    const r = await this.runFor(session, captureArgs(paneTarget(session)))
    if (r.code !== 0) throw new CommandError(`reading the screen of ${session} failed: ${r.stderr || `tmux exited with code ${r.code}`}`, r)
    return r.stdout.toString('utf8')
  }

  async paste(handle: RuntimeHandle, text: string, opts: {noEnter?: boolean} = {}): Promise<void> {
    const session = this.ref(handle)
    const target = paneTarget(session)
    await this.requireAlive(session)
    if (text !== '') {
      const buffer = `svc-paste-${randomUUID()}`
      const r = await this.runFor(session, pasteArgs(target, buffer), Buffer.from(text, 'utf8'))
      if (r.code !== 0) {
        await this.runFor(session, ['delete-buffer', '-b', buffer])
        throw new Error(`pasting into ${session} failed: ${r.stderr}`)
      }
    }
    if (!opts.noEnter) await this.tmuxChecked(session, sendKeysArgs(target, {key: 'Enter'}), `pressing Enter in ${session}`)
  }

  async attach(handle: RuntimeHandle, opts: {cols: number; rows: number}): Promise<TerminalStream> {
    const session = this.ref(handle)
    if (!(await this.sessionExists(session))) throw new Error(`cannot attach: tmux session ${session} does not exist`)
    const env = {...this.env, TERM: this.env.TERM || 'xterm-256color'}
    const child = spawn(this.tmux, [...this.baseFor(session), '-C', 'attach-session', '-t', `=${session}`], {env, stdio: ['pipe', 'pipe', 'pipe']})
    const term = new ControlModeTerminal(childChannel(child), paneTarget(session))
    try {
      await term.start(opts.cols, opts.rows)
    } catch (e) {
      child.kill('SIGKILL')
      throw new Error(`attaching to ${session} failed: ${(e as Error).message}`)
    }
    return term
  }

  /** `<stateDir>/<session>.log`: the pane's raw output (pipe-pane). */
  logFile(session: string): string {
    return join(this.opts.stateDir, `${session}.log`)
  }

  private envFile(session: string): string {
    return join(this.opts.stateDir, `${session}.env`)
  }

  private ref(handle: RuntimeHandle): string {
    if (handle.runtime !== 'local') throw new Error(`a ${handle.runtime} handle was given to the local runtime`)
    if (!REF.test(handle.ref)) throw new Error(`${JSON.stringify(handle.ref)} is not a session name of the local runtime`)
    return handle.ref
  }

  private async paneState(session: string): Promise<'alive' | 'dead' | 'missing'> {
    const dead = await this.paneValue(session, '#{pane_dead}')
    return dead === null ? 'missing' : dead === '0' ? 'alive' : 'dead'
  }

  /** The pane's process and its network's forwarder ports: where the agent's ports are found (src/broker/ports). */
  async agentProcess(handle: RuntimeHandle): Promise<{pid: number; excludePorts: number[]} | null> {
    const pid = Number(await this.paneValue(this.ref(handle), '#{pane_pid}'))
    return pid > 0 ? {pid, excludePorts: egressPorts(this.sandboxDir(handle.ref))} : null
  }

  /**
   * One tmux format of the session's pane, from the server that holds it; null without the
   * session. display-message answers a target it cannot find with no error (formats of no
   * pane), so the session's name comes first in the answer, and a server with other sessions (or
   * kept alive with none, keepServerArgs) tells a missing session from a dead pane.
   */
  private async paneValue(session: string, format: string): Promise<string | null> {
    const args = ['display-message', '-p', '-t', paneTarget(session), `#{session_name}:${format}`]
    const value = (r: RunResult) => (r.code === 0 && r.stdout.toString('utf8').startsWith(`${session}:`) ? r.stdout.toString('utf8').slice(session.length + 1).trim() : null)
    let v = value(await this.runFor(session, args))
    if (v === null && this.adoptLegacy && !this.legacy.has(session)) {
      v = value(await runCommand(this.tmux, args, {env: this.env, timeoutMs: 15_000}))
      if (v !== null) this.legacy.add(session)
    }
    if (v === null) this.legacy.delete(session)
    return v
  }

  /** Whether the session exists, on svc's socket or (an older svc's) on the default one. */
  private async sessionExists(session: string, serverMayRun?: boolean): Promise<boolean> {
    const args = ['has-session', '-t', `=${session}`]
    if ((serverMayRun ?? (await tmuxServerMayRun(this.env, this.base[1]!))) && (await this.run(args)).code === 0) {
      this.legacy.delete(session)
      return true
    }
    if (!this.adoptLegacy) return false
    const old = (await defaultServerMayRun(this.env)) && (await runCommand(this.tmux, args, {env: this.env, timeoutMs: 15_000})).code === 0
    if (old) this.legacy.add(session)
    else this.legacy.delete(session)
    return old
  }

  /** The socket arguments of the server holding the session: svc's, or the default for an older svc's session. */
  private baseFor(session: string): string[] {
    return this.legacy.has(session) ? [] : this.base
  }

  private async requireAlive(session: string): Promise<void> {
    const state = await this.paneState(session)
    if (state === 'missing') throw new Error(`the agent's tmux session ${session} does not exist`)
    if (state === 'dead') throw new Error(`the agent's harness in ${session} has exited; its terminal takes no input`)
  }

  private run(args: string[], input?: Buffer) {
    return runCommand(this.tmux, [...this.base, ...args], {env: this.env, input, timeoutMs: 15_000})
  }

  /** A command about one session, on the server that holds it. */
  private runFor(session: string, args: string[], input?: Buffer) {
    return runCommand(this.tmux, [...this.baseFor(session), ...args], {env: this.env, input, timeoutMs: 15_000})
  }

  private async tmuxChecked(session: string, args: string[], what: string): Promise<void> {
    const r = await this.runFor(session, args)
    if (r.code !== 0) throw new CommandError(`${what} failed: ${r.stderr || `tmux exited with code ${r.code}`}`, r)
  }
}
