import {mkdirSync, readdirSync, rmSync} from 'node:fs'
import {runAgentCheck} from './agent-check.js'
import {join} from 'node:path'
import type {Logger} from 'pino'
import {BROKER_CAPABILITIES, type HelloEvent} from '../api/tunnel-protocol.js'
import {registerLocalPorts} from '../api/local-ports.js'
import {AgentRegistry, type RunningAgent} from './agent-registry.js'
import type {AgentWorkspace, DeletedBranchDto} from '../api/dto.js'
import {agentHome, agentTokenFile, launchAgent, type StartParams} from './agent-launch.js'
import {AgentLimits} from './agent-limits.js'
import {runningStates} from './liveness.js'
import {handleWorkspaceRequest} from './workspace-requests.js'
import type {KeyInput, Runtime, RuntimeHandle} from './runtime.js'
import type {RuntimeSettings} from './runtimes/select.js'
import {agentRepoPaths, removeWorkspace} from './workspace/repository.js'
import {execInAgent} from './agent-exec.js'
import {removeWorkspaceAndBranch} from './workspace/branch-removal.js'
import {keptReportsCourier} from './status-delivery.js'
import {submitText} from './submit-text.js'
import {writeTemplateFiles} from './template-files.js'
import {TunnelClient, type StreamIo} from './tunnel-client.js'
import {AgentPorts} from './ports/port-requests.js'
import {hubEndpointEnv, replicaEnv} from './hub-post.js'
import {BrokerError, BrokerRuntimes, type SelectedRuntimeRef} from './broker-runtimes.js'
import {warmSpawner} from './runtimes/spawner.js'

export type {SelectedRuntimeRef}

export const BROKER_VERSION = '1'
// Keep at most this much output when an agent ends (sent to the Hub to archive).
const MAX_LOG_BYTES = 4 * 1024 * 1024

export interface BrokerOptions {
  hubUrl: string
  /**
   * Every URL of the deployment (its replicas, or one load-balanced URL), `hubUrl` first when
   * absent: the tunnel holds one connection to the first that answers and moves on when it goes.
   */
  hubUrls?: string[]
  brokerId: string
  secret: string
  stateDir: string
  runtime: Runtime
  logger: Logger
  /** Environment of the selected runtime and profile, under the harness's and the agent's. */
  runtimeEnv?: Record<string, string>
  /** The `runtimes` name and entry `runtime` was built from (default: its type and `{type}`). */
  runtimeName?: string
  runtimeSettings?: RuntimeSettings
  /**
   * Builds a runtime from a recorded name and entry: an agent is always handled by the runtime it
   * started on, even after a restart or a change of the default. Without it, only runtimes this
   * broker has used since it started can be reached.
   */
  createRuntime?: (name: string, settings: RuntimeSettings) => Runtime
  /** The runtime of a name (the Hub asks for the one an agent was first dispatched on); throws when unknown. */
  resolveRuntime?: (name: string) => SelectedRuntimeRef
  /** Liveness report interval (also the session watch interval). */
  aliveIntervalMs?: number
  /** Records a telemetry event (reported to the Hub); never throws, never waits. */
  telemetry?: (type: string, attributes: Record<string, string | number | boolean>) => void
}

/**
 * A runtime broker: runs agents on its runtime as the Hub commands through the tunnel, reports
 * their liveness, and tells the Hub when a session ends (with its output).
 */
export class Broker {
  readonly registry: AgentRegistry
  readonly tunnel: TunnelClient
  private watcher: NodeJS.Timeout | null = null
  private readonly courier = keptReportsCourier(
    (agentId) => ({...hubEndpointEnv(this.tunnel.hubUrl, this.hubUrls), SVC_AGENT_ID: agentId, SVC_AUTH_TOKEN_FILE: agentTokenFile(agentHome(this.opts.stateDir, agentId))}),
    (agentId, err) => this.opts.logger.warn({agentId, err: err.message}, 'delivering kept status reports failed'),
  )
  private readonly limits: AgentLimits
  private unregisterPorts = () => {}
  private readonly ports = new AgentPorts((id) => ((a) => ({agentId: a.agentId, runtime: this.runtimeOf(a), handle: a.handle}))(this.agent(id)))
  /** The default runtime new agents start on, and the one each agent started on. */
  private readonly runtimes: BrokerRuntimes

  constructor(readonly opts: BrokerOptions) {
    mkdirSync(opts.stateDir, {recursive: true, mode: 0o700})
    // git and tmux run from a small process of svc's (runtimes/spawner.ts), started now so an
    // agent's first start finds it ready; no fork of this (growing) process per command.
    warmSpawner()
    this.runtimes = new BrokerRuntimes({
      initial: {runtime: opts.runtime, env: opts.runtimeEnv, runtimeName: opts.runtimeName ?? opts.runtime.type, settings: opts.runtimeSettings ?? {type: opts.runtime.type}},
      createRuntime: opts.createRuntime,
      resolveRuntime: opts.resolveRuntime,
    })
    this.registry = new AgentRegistry(opts.stateDir)
    this.limits = new AgentLimits({
      stateDir: opts.stateDir,
      // The replica connected to now: a token refresh must not go to a replica that is gone.
      hubUrl: () => this.tunnel.hubUrl,
      onDeadline: (agentId) => void this.durationExceeded(agentId),
      onError: (agentId, message) => opts.logger.warn({agentId}, message),
    })
    // Agents left running by an earlier broker keep their deadlines and token refresh.
    for (const a of this.registry.all()) this.limits.track(a.agentId, a.deadline)
    this.tunnel = new TunnelClient(
      this.hubUrls,
      opts.brokerId,
      opts.secret,
      {
        hello: (): HelloEvent => ({
          version: BROKER_VERSION,
          capabilities: [...BROKER_CAPABILITIES],
          runtimes: this.runtimeTypes(),
          agents: this.registry.all().map((a) => a.agentId),
          workspaces: this.workspaceIds(),
        }),
        request: (method, params) => this.request(method, params as Record<string, unknown>),
        openStream: (_sid, method, params, io) => this.openStream(method, params as Record<string, unknown>, io),
        openDuplex: (method, params, duplex) => this.ports.open(method, params as Record<string, unknown>, duplex),
      },
      opts.logger,
    )
    // Reports the agents' hooks could not deliver while the Hub was away go as soon as it is back.
    this.tunnel.onConnected(() => void this.deliverKeptReports())
  }

  /** Every URL of the deployment, in the order given. */
  get hubUrls(): string[] {
    return this.opts.hubUrls?.length ? this.opts.hubUrls : [this.opts.hubUrl]
  }

  /** Agents with a workspace or HOME directory here (the Hub removes those of deleted agents). */
  private workspaceIds(): string[] {
    const ids = new Set<string>()
    for (const dir of ['workspaces', 'homes']) {
      try {
        for (const name of readdirSync(join(this.opts.stateDir, dir))) ids.add(name)
      } catch {
        // none yet
      }
    }
    return [...ids]
  }

  /** The runtime new agents start on. */
  get runtime(): Runtime {
    return this.runtimes.current.runtime
  }

  /**
   * Switches the runtime for agents started from now on (settings `runtimes` / `profiles` saved).
   * Running agents stay where they are, reached through the runtime they started on.
   */
  setRuntime(runtime: Runtime, env?: Record<string, string>, name?: string, settings?: RuntimeSettings) {
    this.runtimes.setCurrent({runtime, env, runtimeName: name ?? runtime.type, settings: settings ?? {type: runtime.type}})
  }

  /** The default runtime's name (a `runtimes` name or a type). */
  get runtimeName(): string {
    return this.runtimes.current.runtimeName
  }

  /** Types this broker runs agents on: the default first (shown by `svc broker get`), then those of running agents. */
  runtimeTypes(): string[] {
    return [...new Set([this.runtime.type, ...this.registry.all().map((a) => a.handle.runtime)])]
  }

  private runtimeOf(a: RunningAgent): Runtime {
    return this.runtimes.of(a)
  }

  get connected(): boolean {
    return this.tunnel.connected
  }

  start() {
    this.tunnel.start()
    // A Hub in this process holding this broker's tunnel connects to ports without the tunnel.
    this.unregisterPorts()
    this.unregisterPorts = registerLocalPorts(this.opts.brokerId, (method, params) => this.ports.connect(method, params as Record<string, unknown>))
    this.watcher = setInterval(() => void this.watch(), this.opts.aliveIntervalMs ?? 15_000)
    this.watcher.unref()
  }

  stop() {
    if (this.watcher) clearInterval(this.watcher)
    this.limits.stop()
    this.tunnel.stop()
    this.unregisterPorts()
    this.ports.close()
  }

  /** Reports live sessions as heartbeats, and sessions that ended as stopped (with output). */
  private async watch() {
    const alive: string[] = []
    const agents = this.registry.all()
    const running = await runningStates(agents, (a) => this.runtimeOf(a))
    for (const a of agents) {
      if (running.get(a.agentId)) {
        alive.push(a.agentId)
        continue
      }
      const log = await this.collectLog(a.agentId)
      // The runtime keeps a dead pane (and its log) until stopped: remove both once read.
      await this.runtimeOf(a).stop(a.handle).catch((err) => this.opts.logger.warn({agentId: a.agentId, err: (err as Error).message}, 'removing an ended session failed'))
      this.registry.delete(a.agentId)
      this.limits.forget(a.agentId)
      this.tunnel.event('agent_status', {agentId: a.agentId, phase: 'stopped', detail: 'the harness process ended', log})
      this.opts.telemetry?.('broker.agent.ended', {'agent.id': a.agentId, runtime: a.handle.runtime})
    }
    if (alive.length) this.tunnel.event('alive', {agentIds: alive})
    await this.deliverKeptReports()
  }

  /**
   * Sends the status reports each running agent's hooks kept because the Hub did not take them
   * (status-delivery.ts): an agent that went idle while the Hub was away reports nothing more.
   */
  private async deliverKeptReports() {
    if (this.tunnel.connected) await this.courier(this.registry.all().map((a) => a.agentId))
  }

  private agent(agentId: unknown) {
    const a = typeof agentId === 'string' ? this.registry.get(agentId) : undefined
    if (!a) throw new BrokerError('agent_not_found', `this broker does not run agent ${String(agentId)}`)
    return a
  }

  private async collectLog(agentId: string): Promise<string | undefined> {
    const a = this.registry.get(agentId)
    if (!a) return undefined
    const chunks: Buffer[] = []
    let size = 0
    try {
      for await (const c of this.runtimeOf(a).logs(a.handle, {follow: false})) {
        chunks.push(c)
        size += c.length
        while (size > MAX_LOG_BYTES && chunks.length > 1) size -= chunks.shift()!.length
      }
    } catch {
      return undefined
    }
    return Buffer.concat(chunks).toString('base64')
  }

  private async startAgent(p: StartParams) {
    const existing = this.registry.get(p.agentId)
    if (existing) await this.runtimeOf(existing).stop(existing.handle)
    const {runtime, env: runtimeEnv, runtimeName, settings: runtimeSettings} = this.runtimes.forStart(p.runtime)
    const launched = await launchAgent(p, {stateDir: this.opts.stateDir, hubUrl: this.tunnel.hubUrl, runtime, runtimeEnv: {...runtimeEnv, ...replicaEnv(this.hubUrls)}, writeTemplateFiles})
    const {handle} = launched
    const startedAt = new Date().toISOString()
    this.registry.put({agentId: p.agentId, name: p.name, projectId: p.projectId, handle, startedAt, runtimeName, runtimeSettings, ...(p.maxDurationMs ? {deadline: new Date(Date.now() + p.maxDurationMs).toISOString()} : {})})
    this.limits.track(p.agentId, this.registry.get(p.agentId)!.deadline)
    if (launched.pasteTask) void this.pasteWhenReady(runtime, handle, launched.pasteTask)
    this.opts.logger.info({agentId: p.agentId, runtime: handle.runtime, ref: handle.ref, workspace: launched.workspace?.path}, 'agent started')
    this.opts.telemetry?.('broker.agent.started', {'agent.id': p.agentId, 'project.id': p.projectId, runtime: handle.runtime, 'harness.config': p.harnessConfig})
    return {runtime: runtimeName, ref: handle.ref, workspace: launched.workspace, image: handle.image ?? null, sandbox: handle.sandbox ?? null}
  }

  /** `max_duration` ran out: stop the session and tell the Hub why (with its output). */
  private async durationExceeded(agentId: string) {
    const a = this.registry.get(agentId)
    if (!a) return
    const {log} = await this.stopAgent(agentId, null).catch(() => ({log: undefined}))
    this.tunnel.event('agent_status', {agentId, phase: 'stopped', activity: 'limits_exceeded', detail: 'max_duration reached: the broker stopped the agent', log})
  }

  /** Pastes a task once the terminal takes input (a harness's UI needs a moment to come up). */
  private async pasteWhenReady(runtime: Runtime, handle: RuntimeHandle, text: string) {
    for (let i = 0; i < 50 && !(await runtime.terminalReady(handle).catch(() => false)); i++) await new Promise((r) => setTimeout(r, 100))
    await submitText(runtime, handle, text).catch((err) => this.opts.logger.warn({ref: handle.ref, err: (err as Error).message}, 'pasting the task failed'))
  }

  /**
   * Stops an agent's session; with `removeWorkspace`, also its repository and work tree (the
   * branch stays; with `deleteBranch`, it goes once merged: branch-removal.ts, answered as `branch`).
   */
  private async stopAgent(agentId: string, removeWs: AgentWorkspace | null, checkout?: string | null, deleteBranch = false): Promise<{log?: string; branch?: DeletedBranchDto}> {
    const a = this.registry.get(agentId)
    let log: string | undefined
    if (a) {
      log = await this.collectLog(a.agentId)
      await this.runtimeOf(a).stop(a.handle)
      this.registry.delete(a.agentId)
      this.limits.forget(agentId)
      this.opts.logger.info({agentId: a.agentId}, 'agent stopped')
      this.opts.telemetry?.('broker.agent.stopped', {'agent.id': a.agentId, runtime: a.handle.runtime})
    }
    let branch: DeletedBranchDto | undefined
    if (removeWs) {
      const paths = agentRepoPaths(this.opts.stateDir, agentId)
      const removing = deleteBranch && removeWs.branch ? removeWorkspaceAndBranch(paths, removeWs, checkout).then((r) => ((branch = r.branch), r.kept)) : removeWorkspace(paths, removeWs.branch ? removeWs : null, {checkout})
      const kept = await removing.catch((err) => (this.opts.logger.warn({agentId, err: (err as Error).message}, 'removing the workspace failed'), null))
      // The one place a user learns where a deleted agent's unpushed work went.
      if (kept) this.opts.logger.warn({agentId, branch: removeWs.branch, kept}, `the agent's clone held unpushed commits: its repository is kept at ${kept} (git fetch ${kept} ${removeWs.branch})`)
      rmSync(agentHome(this.opts.stateDir, agentId), {recursive: true, force: true})
    }
    return {log, ...(branch && {branch})}
  }

  /** A command in an agent's own confinement: its session's runtime, else (stopped) this broker's default (agent-exec.ts). */
  private async runInAgent(agentId: string, argv: string[]) {
    const a = this.registry.get(agentId)
    return execInAgent(this.opts.stateDir, a ? this.runtimeOf(a) : this.runtime, a?.handle ?? null, agentId, argv)
  }

  /** Requests from the Hub. Unknown methods are refused so an older broker says so plainly. */
  async request(method: string, params: Record<string, unknown>): Promise<unknown> {
    switch (method) {
      case 'agent.start':
        return this.startAgent(params as unknown as StartParams)
      case 'agent.stop':
        if (typeof params.agentId !== 'string') return {}
        return this.stopAgent(params.agentId, (params.removeWorkspace as AgentWorkspace | undefined) ?? null, typeof params.checkout === 'string' ? params.checkout : null, params.deleteBranch === true)
      case 'agent.logs':
        this.agent(params.agentId)
        return {log: (await this.collectLog(params.agentId as string)) ?? ''}
      case 'agent.keys': {
        const a = this.agent(params.agentId)
        if (!(await this.runtimeOf(a).terminalReady(a.handle))) throw new BrokerError('terminal_not_ready', 'the agent\'s terminal is not ready')
        await this.runtimeOf(a).sendKeys(a.handle, params.input as KeyInput)
        return {delivered: true}
      }
      case 'agent.message': {
        const a = this.agent(params.agentId)
        if (!(await this.runtimeOf(a).terminalReady(a.handle))) throw new BrokerError('terminal_not_ready', 'the agent\'s terminal is not ready')
        if (params.interruptKey) await this.runtimeOf(a).sendKeys(a.handle, {key: String(params.interruptKey)})
        if (params.plain === true) {
          // Typed as keystrokes, for programs that do not understand bracketed paste.
          await this.runtimeOf(a).sendKeys(a.handle, {literal: String(params.text ?? '')})
          if (params.noEnter !== true) await this.runtimeOf(a).sendKeys(a.handle, {key: 'Enter'})
        } else await submitText(this.runtimeOf(a), a.handle, String(params.text ?? ''), {noEnter: params.noEnter === true})
        return {delivered: true}
      }
      case 'agent.diff':
      case 'agent.merge':
      case 'agent.push':
        return handleWorkspaceRequest(this.opts.stateDir, method, params, {runInAgent: (id, argv) => this.runInAgent(id, argv), homeOf: (id) => agentHome(this.opts.stateDir, id)})
      case 'agent.ports':
        return this.ports.list(params)
      case 'agent.check':
        return runAgentCheck(params, (id, argv) => this.runInAgent(id, argv))
      default:
        throw new BrokerError('unsupported_method', `this broker does not support ${method}`)
    }
  }

  async openStream(method: string, params: Record<string, unknown>, io: StreamIo): Promise<void> {
    const a = this.agent(params.agentId)
    if (method === 'agent.logs.follow') {
      const ac = new AbortController()
      io.onClose(() => ac.abort())
      void (async () => {
        try {
          for await (const chunk of this.runtimeOf(a).logs(a.handle, {follow: true, signal: ac.signal})) io.send(chunk)
          io.close()
        } catch (err) {
          if (!ac.signal.aborted) io.close({code: 'broker_error', message: (err as Error).message})
        }
      })()
      return
    }
    if (method === 'agent.attach') {
      const cols = Number(params.cols) || 80
      const rows = Number(params.rows) || 24
      const term = await this.runtimeOf(a).attach(a.handle, {cols, rows})
      term.onData((d) => io.send(d))
      term.onClose(() => io.close())
      io.onData((d) => void term.write(d).catch(() => {}))
      io.onResize((c, r) => void term.resize(c, r).catch(() => {}))
      io.onClose(() => void term.close().catch(() => {}))
      return
    }
    throw new BrokerError('unsupported_method', `this broker does not support ${method}`)
  }
}
