/**
 * The `kubernetes` runtime: one Pod per agent through the API (no client library). As in the
 * container runtimes the image must carry sh and tmux: the container runs the harness in a tmux
 * session `svc` (see containerScript), and keys, pastes and attach are `tmux` commands run
 * through the exec subresource (WebSocket, v4.channel.k8s.io).
 *
 * The agent env (it holds the agent token) goes into a Secret `<pod>-env` that the container
 * reads with envFrom, not into the pod spec, which anyone allowed to list pods can read.
 *
 * Limit: the v4 exec protocol cannot close stdin, so pastes travel as a `set-buffer` argument
 * (at most MAX_PASTE_BYTES) instead of through stdin.
 */
import {randomUUID} from 'node:crypto'
import type {AgentSpec, KeyInput, Resources, Runtime, RuntimeHandle, TerminalStream} from '../runtime.js'
import {CONTAINER_SESSION, inContainerCommand} from './container-cli.js'
import {KubeApi, statusMessage} from './kube-api.js'
import {type KubeTarget, kubeconfigPaths, loadKubeconfig, resolveKubeTarget} from './kubeconfig.js'
import {cpuCores, quantityBytes} from './quantity.js'
import {ControlModeTerminal} from './tmux-control.js'
import {captureArgs, checkEnvKey, paneTarget, pasteFromArgArgs, sendKeysArgs, sessionNameFor} from './tmux-args.js'

export const CONTAINER_NAME = 'agent'
/** Pastes go as one argv element: below Linux's per-argument limit (128 KiB). */
export const MAX_PASTE_BYTES = 100 * 1024
const TARGET = paneTarget(CONTAINER_SESSION)

export interface KubernetesOptions {
  /** Settings `runtimes.<name>.context`; default the kubeconfig's current-context. */
  context?: string
  /** Settings `runtimes.<name>.namespace`; default the context's namespace, else `default`. */
  namespace?: string
  /** Already-resolved target (tests, in-cluster setups); skips the kubeconfig. */
  target?: KubeTarget
  /** Environment used to find the kubeconfig (KUBECONFIG, HOME); default process.env. */
  env?: NodeJS.ProcessEnv
  cols?: number
  rows?: number
}

const POD_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/

/** Pod names are DNS labels: the session name lower-cased. */
export function podNameFor(agentId: string): string {
  const name = sessionNameFor(agentId).toLowerCase().replace(/_/g, '-')
  if (!POD_NAME.test(name)) throw new Error(`agent ID ${JSON.stringify(agentId)} cannot name a pod (${name})`)
  return name
}

function labelValue(what: string, v: string): string {
  if (!LABEL_VALUE.test(v) || v.length > 63) throw new Error(`${what} ${JSON.stringify(v)} cannot be a Kubernetes label value`)
  return v
}

/** requests and limits from Resources; disk is ephemeral-storage; gpu is nvidia.com/gpu. */
export function podResources(r: Resources): {requests: Record<string, string>; limits: Record<string, string>} {
  cpuCores(r.cpu)
  quantityBytes(r.memory)
  quantityBytes(r.disk)
  const base = {cpu: r.cpu, memory: r.memory, 'ephemeral-storage': r.disk}
  return {requests: {...base}, limits: r.gpu > 0 ? {...base, 'nvidia.com/gpu': String(r.gpu)} : {...base}}
}

export const envSecretName = (podName: string) => `${podName}-env`

function labels(spec: AgentSpec): Record<string, string> {
  return {'app.kubernetes.io/managed-by': 'svc', 'svc.agent': labelValue('agent ID', spec.agentId), 'svc.project': labelValue('project ID', spec.projectId)}
}

/** The Secret holding the agent env. */
export function envSecretManifest(spec: AgentSpec, opts: {namespace: string}): Record<string, unknown> {
  for (const k of Object.keys(spec.env)) checkEnvKey(k)
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {name: envSecretName(podNameFor(spec.agentId)), namespace: opts.namespace, labels: labels(spec)},
    type: 'Opaque',
    stringData: {...spec.env},
  }
}

export function podManifest(spec: AgentSpec, opts: {namespace: string; cols: number; rows: number}): Record<string, unknown> {
  if (!spec.image) throw new Error(`agent ${spec.agentId} has no container image: set \`image\` in its harness config`)
  for (const k of Object.keys(spec.env)) checkEnvKey(k)
  const name = podNameFor(spec.agentId)
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name, namespace: opts.namespace, labels: labels(spec)},
    spec: {
      restartPolicy: 'Never',
      containers: [
        {
          name: CONTAINER_NAME,
          image: spec.image,
          command: inContainerCommand(spec.command, opts),
          envFrom: [{secretRef: {name: envSecretName(name)}}],
          ...(spec.workdir ? {workingDir: spec.workdir} : {}),
          resources: podResources(spec.resources),
        },
      ],
    },
  }
}

const enc = encodeURIComponent
export const podsPath = (ns: string) => `/api/v1/namespaces/${enc(ns)}/pods`
export const podPath = (ns: string, name: string) => `${podsPath(ns)}/${enc(name)}`
export const secretsPath = (ns: string) => `/api/v1/namespaces/${enc(ns)}/secrets`
export const secretPath = (ns: string, name: string) => `${secretsPath(ns)}/${enc(name)}`

export function logPath(ns: string, name: string, follow: boolean): string {
  return `${podPath(ns, name)}/log?container=${CONTAINER_NAME}${follow ? '&follow=true' : ''}`
}

export function execPath(ns: string, name: string, command: string[], stdin: boolean): string {
  const q = new URLSearchParams({container: CONTAINER_NAME, stdout: 'true', stderr: 'true'})
  if (stdin) q.set('stdin', 'true')
  for (const c of command) q.append('command', c)
  return `${podPath(ns, name)}/exec?${q.toString()}`
}

const REF = /^svc-[a-z0-9-]+$/

export class KubernetesRuntime implements Runtime {
  readonly type = 'kubernetes' as const
  private apiCache: KubeApi | undefined

  constructor(private readonly opts: KubernetesOptions = {}) {}

  /** The kubeconfig is read on first use, so a broker without one still starts. */
  get api(): KubeApi {
    if (!this.apiCache) {
      const target = this.opts.target ?? resolveKubeTarget(loadKubeconfig(kubeconfigPaths(this.opts.env)), {context: this.opts.context, namespace: this.opts.namespace})
      this.apiCache = new KubeApi(target)
    }
    return this.apiCache
  }

  private get ns(): string {
    return this.opts.namespace || this.api.target.namespace
  }

  async available(): Promise<boolean> {
    try {
      const r = await this.api.request('GET', '/version')
      return r.status === 200
    } catch {
      return false
    }
  }

  async start(spec: AgentSpec): Promise<RuntimeHandle> {
    const manifest = podManifest(spec, {namespace: this.ns, cols: this.opts.cols ?? 200, rows: this.opts.rows ?? 50})
    const name = podNameFor(spec.agentId)
    const secret = envSecretManifest(spec, {namespace: this.ns})
    let s = await this.api.request('POST', secretsPath(this.ns), secret)
    // A Secret left by an earlier start that failed half-way: replace it.
    if (s.status === 409) s = await this.api.request('PUT', secretPath(this.ns, envSecretName(name)), secret)
    if (s.status !== 201 && s.status !== 200) throw new Error(`creating the env Secret of agent ${spec.agentId} failed: ${statusMessage(s)}`)
    const r = await this.api.request('POST', podsPath(this.ns), manifest)
    if (r.status === 201 || r.status === 200) return {runtime: 'kubernetes', ref: name}
    // A running pod read its env when it started and keeps it; after any other failure no Secret is left behind.
    if (r.status === 409) throw new Error(`agent ${spec.agentId} already has a pod (${name}); stop it first`)
    await this.api.request('DELETE', secretPath(this.ns, envSecretName(name))).catch(() => undefined)
    throw new Error(`creating the pod of agent ${spec.agentId} failed: ${statusMessage(r)}`)
  }

  async stop(handle: RuntimeHandle): Promise<void> {
    const name = this.ref(handle)
    const r = await this.api.request('DELETE', `${podPath(this.ns, name)}?gracePeriodSeconds=5`)
    if (r.status !== 200 && r.status !== 202 && r.status !== 404) throw new Error(`deleting pod ${name} failed: ${statusMessage(r)}`)
    const s = await this.api.request('DELETE', secretPath(this.ns, envSecretName(name)))
    if (s.status !== 200 && s.status !== 202 && s.status !== 404) throw new Error(`deleting the env Secret of pod ${name} failed: ${statusMessage(s)}`)
  }

  async isRunning(handle: RuntimeHandle): Promise<boolean> {
    const r = await this.api.request('GET', podPath(this.ns, this.ref(handle)))
    if (r.status === 404) return false
    if (r.status !== 200) throw new Error(`reading pod ${handle.ref} failed: ${statusMessage(r)}`)
    const pod = r.json as {metadata?: {deletionTimestamp?: string}; status?: {phase?: string}}
    return pod.status?.phase === 'Running' && !pod.metadata?.deletionTimestamp
  }

  async terminalReady(handle: RuntimeHandle): Promise<boolean> {
    if (!(await this.isRunning(handle))) return false
    try {
      const r = await this.api.exec(execPath(this.ns, this.ref(handle), ['tmux', 'display-message', '-p', '-t', TARGET, '#{pane_dead}'], false))
      return r.exitCode === 0 && r.stdout.toString('utf8').trim() === '0'
    } catch {
      return false
    }
  }

  logs(handle: RuntimeHandle, opts: {follow: boolean; signal?: AbortSignal}): AsyncIterable<Buffer> {
    return this.api.stream(logPath(this.ns, this.ref(handle), opts.follow), opts.signal)
  }

  async sendKeys(handle: RuntimeHandle, input: KeyInput): Promise<void> {
    await this.tmux(handle, sendKeysArgs(TARGET, input), 'sending keys')
  }

  async capture(handle: RuntimeHandle): Promise<string> {
    return (await this.tmux(handle, captureArgs(TARGET), 'reading the screen')).toString('utf8')
  }

  async paste(handle: RuntimeHandle, text: string, opts: {noEnter?: boolean} = {}): Promise<void> {
    if (Buffer.byteLength(text) > MAX_PASTE_BYTES) throw new Error(`a paste on kubernetes is limited to ${MAX_PASTE_BYTES} bytes`)
    if (text !== '') await this.tmux(handle, pasteFromArgArgs(TARGET, `svc-paste-${randomUUID()}`, text), 'pasting')
    if (!opts.noEnter) await this.tmux(handle, sendKeysArgs(TARGET, {key: 'Enter'}), 'pressing Enter')
  }

  async attach(handle: RuntimeHandle, opts: {cols: number; rows: number}): Promise<TerminalStream> {
    const name = this.ref(handle)
    const stream = await this.api.execStream(execPath(this.ns, name, ['tmux', '-C', 'attach-session', '-t', `=${CONTAINER_SESSION}`], true))
    const term = new ControlModeTerminal(
      {
        write: (d) => stream.writeStdin(d),
        onData: (l) => stream.onStdout(l),
        onClose: (l) => stream.onClose(l),
        // v4 exec cannot half-close stdin; `detach-client` (sent before this) ends the client.
        end: () => {},
        kill: () => stream.close(),
      },
      TARGET,
    )
    try {
      await term.start(opts.cols, opts.rows)
    } catch (e) {
      stream.close()
      throw new Error(`attaching to pod ${name} failed (the image must provide tmux): ${(e as Error).message}`)
    }
    return term
  }

  /** Runs tmux in the agent's pod; resolves its stdout. */
  private async tmux(handle: RuntimeHandle, args: string[], what: string): Promise<Buffer> {
    const name = this.ref(handle)
    const r = await this.api.exec(execPath(this.ns, name, ['tmux', ...args], false))
    if (r.exitCode !== 0) throw new Error(`${what} in pod ${name} failed: ${r.stderr.toString('utf8').trim() || r.message || `exit code ${r.exitCode}`}`)
    return r.stdout
  }

  private ref(handle: RuntimeHandle): string {
    if (handle.runtime !== 'kubernetes') throw new Error(`a ${handle.runtime} handle was given to the kubernetes runtime`)
    if (!REF.test(handle.ref)) throw new Error(`${JSON.stringify(handle.ref)} is not a pod name of the kubernetes runtime`)
    return handle.ref
  }
}
