import {mkdirSync, writeFileSync} from 'node:fs'
import {dirname, join, resolve, sep} from 'node:path'
import type {Logger} from 'pino'
import {BROKER_CAPABILITIES, type HelloEvent} from '../api/tunnel-protocol.js'
import {AgentRegistry} from './agent-registry.js'
import {resolveHarness, type HarnessConfig} from './harness.js'
import type {KeyInput, Runtime, RuntimeHandle} from './runtime.js'
import {TunnelClient, type StreamIo} from './tunnel-client.js'

export const BROKER_VERSION = '1'
// Keep at most this much output when an agent ends (sent to the Hub to archive).
const MAX_LOG_BYTES = 4 * 1024 * 1024

export interface BrokerOptions {
  hubUrl: string
  brokerId: string
  secret: string
  stateDir: string
  runtime: Runtime
  logger: Logger
  /** Environment of the selected runtime and profile, under the harness's and the agent's. */
  runtimeEnv?: Record<string, string>
  /** Liveness report interval (also the session watch interval). */
  aliveIntervalMs?: number
  /** Records a telemetry event (reported to the Hub); never throws, never waits. */
  telemetry?: (type: string, attributes: Record<string, string | number | boolean>) => void
}

class BrokerError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

interface StartParams {
  agentId: string
  name: string
  projectId: string
  harnessConfig: string
  harness?: HarnessConfig
  task?: string | null
  env: Record<string, string>
  /** The agent's template files (base64), laid out in its working directory. */
  templateFiles?: Array<{path: string; content: string}>
}

/**
 * Writes template files under `dir`. Paths were checked when the template was uploaded; they
 * are checked again here because the broker trusts nothing it did not verify itself.
 */
export function writeTemplateFiles(dir: string, files: Array<{path: string; content: string}>): void {
  const root = resolve(dir)
  for (const f of files) {
    const target = resolve(root, f.path)
    if (!target.startsWith(root + sep) || f.path.split('/').includes('..')) throw new BrokerError('bad_template', `template path ${JSON.stringify(f.path)} leaves the workspace`)
    mkdirSync(dirname(target), {recursive: true})
    writeFileSync(target, Buffer.from(f.content, 'base64'))
  }
}

/**
 * A runtime broker: runs agents on its runtime as the Hub commands through the tunnel, reports
 * their liveness, and tells the Hub when a session ends (with its output).
 */
export class Broker {
  readonly registry: AgentRegistry
  readonly tunnel: TunnelClient
  private watcher: NodeJS.Timeout | null = null
  /** The runtime (and its environment) new agents start on; `setRuntime` replaces it. */
  private current: {runtime: Runtime; env: Record<string, string> | undefined}
  /** Every runtime this broker has used, by type: agents keep the runtime they started on. */
  private readonly byType = new Map<string, Runtime>()

  constructor(readonly opts: BrokerOptions) {
    mkdirSync(opts.stateDir, {recursive: true, mode: 0o700})
    this.current = {runtime: opts.runtime, env: opts.runtimeEnv}
    this.byType.set(opts.runtime.type, opts.runtime)
    this.registry = new AgentRegistry(opts.stateDir)
    this.tunnel = new TunnelClient(
      opts.hubUrl,
      opts.brokerId,
      opts.secret,
      {
        hello: (): HelloEvent => ({version: BROKER_VERSION, capabilities: [...BROKER_CAPABILITIES], runtimes: [this.current.runtime.type], agents: this.registry.all().map((a) => a.agentId)}),
        request: (method, params) => this.request(method, params as Record<string, unknown>),
        openStream: (_sid, method, params, io) => this.openStream(method, params as Record<string, unknown>, io),
      },
      opts.logger,
    )
  }

  /** The runtime new agents start on. */
  get runtime(): Runtime {
    return this.current.runtime
  }

  /**
   * Switches the runtime for agents started from now on (settings `runtimes` / `profiles` saved).
   * Running agents stay where they are, reached through the runtime of their handle's type.
   */
  setRuntime(runtime: Runtime, env?: Record<string, string>) {
    this.current = {runtime, env}
    this.byType.set(runtime.type, runtime)
  }

  /** The runtime an agent's handle belongs to (the current one for an unknown type). */
  private runtimeOf(handle: RuntimeHandle): Runtime {
    return this.byType.get(handle.runtime) ?? this.current.runtime
  }

  get connected(): boolean {
    return this.tunnel.connected
  }

  start() {
    this.tunnel.start()
    this.watcher = setInterval(() => void this.watch(), this.opts.aliveIntervalMs ?? 15_000)
    this.watcher.unref()
  }

  stop() {
    if (this.watcher) clearInterval(this.watcher)
    this.tunnel.stop()
  }

  /** Reports live sessions as heartbeats, and sessions that ended as stopped (with output). */
  private async watch() {
    const alive: string[] = []
    for (const a of this.registry.all()) {
      if (await this.runtimeOf(a.handle).isRunning(a.handle).catch(() => true)) {
        alive.push(a.agentId)
        continue
      }
      const log = await this.collectLog(a.agentId)
      // The runtime keeps a dead pane (and its log) until stopped: remove both once read.
      await this.runtimeOf(a.handle).stop(a.handle).catch((err) => this.opts.logger.warn({agentId: a.agentId, err: (err as Error).message}, 'removing an ended session failed'))
      this.registry.delete(a.agentId)
      this.tunnel.event('agent_status', {agentId: a.agentId, phase: 'stopped', detail: 'the harness process ended', log})
      this.opts.telemetry?.('broker.agent.ended', {'agent.id': a.agentId, runtime: a.handle.runtime})
    }
    if (alive.length) this.tunnel.event('alive', {agentIds: alive})
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
      for await (const c of this.runtimeOf(a.handle).logs(a.handle, {follow: false})) {
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
    if (existing) await this.runtimeOf(existing.handle).stop(existing.handle)
    const resolved = resolveHarness(p.harnessConfig, {configs: p.harness ? {[p.harnessConfig]: p.harness} : undefined, task: p.task ?? undefined})
    const workdir = join(this.opts.stateDir, 'workspaces', p.agentId)
    mkdirSync(workdir, {recursive: true})
    writeTemplateFiles(workdir, p.templateFiles ?? [])
    const {runtime, env: runtimeEnv} = this.current
    const handle = await runtime.start({
      agentId: p.agentId,
      name: p.name,
      projectId: p.projectId,
      command: resolved.command,
      env: {...runtimeEnv, ...resolved.env, ...p.env, SVC_HUB_ENDPOINT: this.opts.hubUrl},
      image: resolved.image,
      workdir,
      resources: resolved.resources,
    })
    this.registry.put({agentId: p.agentId, name: p.name, projectId: p.projectId, handle, startedAt: new Date().toISOString()})
    if (p.task && !resolved.taskInCommand) await runtime.paste(handle, p.task).catch(() => {})
    this.opts.logger.info({agentId: p.agentId, runtime: handle.runtime, ref: handle.ref}, 'agent started')
    this.opts.telemetry?.('broker.agent.started', {'agent.id': p.agentId, 'project.id': p.projectId, runtime: handle.runtime, 'harness.config': p.harnessConfig})
    return {runtime: handle.runtime, ref: handle.ref}
  }

  /** Requests from the Hub. Unknown methods are refused so an older broker says so plainly. */
  async request(method: string, params: Record<string, unknown>): Promise<unknown> {
    switch (method) {
      case 'agent.start':
        return this.startAgent(params as unknown as StartParams)
      case 'agent.stop': {
        const a = typeof params.agentId === 'string' ? this.registry.get(params.agentId) : undefined
        if (!a) return {}
        const log = await this.collectLog(a.agentId)
        await this.runtimeOf(a.handle).stop(a.handle)
        this.registry.delete(a.agentId)
        this.opts.logger.info({agentId: a.agentId}, 'agent stopped')
        this.opts.telemetry?.('broker.agent.stopped', {'agent.id': a.agentId, runtime: a.handle.runtime})
        return {log}
      }
      case 'agent.logs':
        this.agent(params.agentId)
        return {log: (await this.collectLog(params.agentId as string)) ?? ''}
      case 'agent.keys': {
        const a = this.agent(params.agentId)
        if (!(await this.runtimeOf(a.handle).terminalReady(a.handle))) throw new BrokerError('terminal_not_ready', 'the agent\'s terminal is not ready')
        await this.runtimeOf(a.handle).sendKeys(a.handle, params.input as KeyInput)
        return {delivered: true}
      }
      case 'agent.message': {
        const a = this.agent(params.agentId)
        if (!(await this.runtimeOf(a.handle).terminalReady(a.handle))) throw new BrokerError('terminal_not_ready', 'the agent\'s terminal is not ready')
        if (params.interruptKey) await this.runtimeOf(a.handle).sendKeys(a.handle, {key: String(params.interruptKey)})
        if (params.plain === true) {
          // Typed as keystrokes, for programs that do not understand bracketed paste.
          await this.runtimeOf(a.handle).sendKeys(a.handle, {literal: String(params.text ?? '')})
          if (params.noEnter !== true) await this.runtimeOf(a.handle).sendKeys(a.handle, {key: 'Enter'})
        } else await this.runtimeOf(a.handle).paste(a.handle, String(params.text ?? ''), {noEnter: params.noEnter === true})
        return {delivered: true}
      }
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
          for await (const chunk of this.runtimeOf(a.handle).logs(a.handle, {follow: true, signal: ac.signal})) io.send(chunk)
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
      const term = await this.runtimeOf(a.handle).attach(a.handle, {cols, rows})
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
