import type {RunResult} from './runtimes/run-command.js'
/**
 * The runtime port: how a broker runs an agent's harness. Implementations: `local` (tmux on the
 * broker's host), `docker` and `podman` (their CLIs), `kubernetes` (the API). The broker talks
 * only to this interface; the Hub never sees a runtime.
 */
export type RuntimeType = 'local' | 'docker' | 'podman' | 'container' | 'kubernetes'

export interface Resources {
  cpu: string
  memory: string
  disk: string
  gpu: number
}

/** Resource defaults of the spec's Limits table. */
export const DEFAULT_RESOURCES: Resources = {cpu: '1', memory: '2Gi', disk: '10Gi', gpu: 0}

export interface AgentSpec {
  agentId: string
  /** Human name of the agent, unique in its project. */
  name: string
  projectId: string
  /** argv of the harness process (e.g. ['/bin/bash', '--noprofile', '--norc', '-i'] for `shell`). */
  command: string[]
  /**
   * argv run first in the session, with `command` as its last arguments (the setup step,
   * workspace/setup.ts): the session runs `[...prelude, ...command]`, while what the sandbox
   * decides from the harness (its API hosts, its executable's mounts) still comes from `command`.
   */
  prelude?: string[]
  /** The agent environment (SVC_HUB_ENDPOINT, SVC_AUTH_TOKEN, SVC_AGENT_ID, ...) plus harness env. */
  env: Record<string, string>
  /**
   * The variables whose URLs an isolated sandbox lets the agent reach (egress-plan.ts): the harness
   * config's and the Hub's, never the agent's secrets (an agent can write project secrets, and a
   * secret named `*_BASE_URL` would widen its own network). Absent: `env`.
   */
  egressEnv?: Record<string, string>
  /** Container image (container runtimes; ignored by `local`). */
  image?: string
  /** The agent's working directory: its git worktree (or an empty directory without a checkout). */
  workdir?: string
  /** The agent's own HOME (harness config and credentials); the runtime sets HOME to it. */
  home?: string
  /**
   * Other paths the agent must be able to write, at the same path (the checkout's `.git` parts a
   * worktree commits into). A sandbox or container mounts them; the plain local runtime ignores them.
   */
  writablePaths?: string[]
  /** Paths the agent must be able to read (the svc executable its hooks run). */
  readablePaths?: string[]
  resources: Resources
}

/** Where a one-off command runs (Runtime.exec): the agent's paths, as its record fixes them. */
export interface ExecSpec {
  agentId: string
  workdir: string
  home: string
  writablePaths: string[]
  readablePaths: string[]
}

/** What a runtime needs to find an agent again, kept by the broker (and persisted by it). */
export interface RuntimeHandle {
  runtime: RuntimeType
  /** tmux session name, container name, or pod name. */
  ref: string
  /** The image the agent runs (container runtimes), as resolved at start. */
  image?: string
  /** How the agent is confined: `bubblewrap`, `none` (local, unsandboxed on purpose), or `container`. */
  sandbox?: string
}

/** A live interactive terminal on an agent (attach). Bytes in both directions. */
export interface TerminalStream {
  onData(listener: (chunk: Buffer) => void): void
  onClose(listener: () => void): void
  write(data: Buffer): Promise<void>
  resize(cols: number, rows: number): Promise<void>
  close(): Promise<void>
}

/** A named key (`Enter`, `Escape`, `Tab`, `Up`, `C-c`, ...) or a literal string. */
export type KeyInput = {key: string} | {literal: string}

export interface Runtime {
  readonly type: RuntimeType
  /** True when this runtime can run agents here (tmux on PATH; a container engine answering). */
  available(): Promise<boolean>
  /** Optional: told when an agent's start begins, before its workspace is made, to ask its own questions of that start meanwhile. */
  prepareStart?(agentId: string): void
  start(spec: AgentSpec): Promise<RuntimeHandle>
  /** Stops and removes the agent's session or container. Idempotent. */
  stop(handle: RuntimeHandle): Promise<void>
  isRunning(handle: RuntimeHandle): Promise<boolean>
  /**
   * Optional: `isRunning` of many agents in one call (the broker's liveness watch checks all its
   * agents every tick; a process per agent is a spawn each from the broker's event loop).
   */
  areRunning?(handles: RuntimeHandle[]): Promise<boolean[]>
  /** Output so far, then (with follow) new output until the signal aborts or the agent ends. */
  logs(handle: RuntimeHandle, opts: {follow: boolean; signal?: AbortSignal}): AsyncIterable<Buffer>
  attach(handle: RuntimeHandle, opts: {cols: number; rows: number}): Promise<TerminalStream>
  /** True when the terminal exists and accepts input. */
  terminalReady(handle: RuntimeHandle): Promise<boolean>
  /**
   * Optional: runs one command in the agent's own confinement (its sandbox or container), with
   * its repository and HOME as the agent has them and no network, and answers its result. For
   * git work that must run with the agent's own repository configuration (a parent taking its
   * child's work): never run on the host. `handle` is the running session (a container must be
   * running); a sandbox runtime makes a fresh one from `spec`.
   */
  exec?(handle: RuntimeHandle | null, spec: ExecSpec, argv: string[], opts?: {timeoutMs?: number}): Promise<RunResult>
  /**
   * Optional: the agent's first process on this host and the ports of its own forwarders (not
   * the agent's), where its listening ports are found (src/broker/ports); null when not running.
   */
  agentProcess?(handle: RuntimeHandle): Promise<{pid: number; excludePorts: number[]} | null>
  /**
   * Optional (container engines): the engine's executable, its flags before the subcommand and
   * environment, with which a project's image is built (images/project-image.ts).
   */
  engine?(): {bin: string; global: string[]; env: NodeJS.ProcessEnv}
  /** Sends one named key or one literal string to the terminal, once (no retry). */
  sendKeys(handle: RuntimeHandle, input: KeyInput): Promise<void>
  /**
   * Optional: the terminal's visible text (`tmux capture-pane -p`). Lets a message's Enter wait
   * until the harness has drawn the paste (see submit-text.ts).
   */
  capture?(handle: RuntimeHandle): Promise<string>
  /** Pastes text as a bracketed paste, then presses Enter unless `noEnter`. */
  paste(handle: RuntimeHandle, text: string, opts?: {noEnter?: boolean}): Promise<void>
}
