/**
 * Builds the Runtime an agent runs on from settings: `profiles.<p>.runtime` names an entry of
 * `runtimes` ({type, host, context, namespace, env, sandbox, env_passthrough, nice, image}); with no
 * profile, the broker's default runtime (default-runtime.ts: chosen once, at the first start,
 * then kept), configured by the `runtimes` entry of that name when there is one.
 */
import type {HarnessConfig} from '../harness.js'
import type {Runtime} from '../runtime.js'
import {DockerRuntime} from './docker.js'
import {KubernetesRuntime} from './kubernetes.js'
import {LocalTmuxRuntime} from './local-tmux.js'
import {PodmanRuntime} from './podman.js'
import {parseHostPort} from '../sandbox/egress-plan.js'
import type {IsolationSettings} from '../sandbox/isolation.js'

/** `runtimes.<name>.network` when unset (see docs/runtimes.md). */
export const DEFAULT_NETWORK = 'isolated'

/** One entry of settings `runtimes` (spec field names; `local` is this project's addition). */
export interface RuntimeSettings {
  type: string
  host?: string
  context?: string
  namespace?: string
  sync?: string
  gke?: boolean
  env?: Record<string, string>
  /** local: `bubblewrap` (default) runs each agent in a bubblewrap sandbox; `none` runs it unsandboxed, on purpose. */
  sandbox?: string
  /** local with a sandbox: names of broker environment variables that reach the agent. */
  env_passthrough?: string[]
  /** local: the nice value of agents' sessions (0-19, default 10). */
  nice?: number
  /** docker, podman: image of harness configs that name none (default: the `svc image build` base image). */
  image?: string
  /** local with a sandbox: `isolated` (own network namespace, only allowed destinations) or `host`. */
  network?: string
  /** local with a sandbox, broker running as root: `required` (agents run as an unprivileged uid in a user namespace) or `off`. */
  user_namespace?: string
  /** local with an isolated network: more `host:port` pairs agents may reach. */
  egress_allow?: string[]
}

/** One entry of settings `profiles`. */
export interface ProfileSettings {
  runtime: string
  default_template?: string
  default_harness_config?: string
  image_registry?: string
  env?: Record<string, string>
  harness_overrides?: Record<string, Partial<HarnessConfig>>
  secrets?: unknown[]
}

export interface RuntimeSelectionSettings {
  active_profile?: string
  runtimes?: Record<string, RuntimeSettings>
  profiles?: Record<string, ProfileSettings>
}

export interface RuntimeFactoryOptions {
  /** Where the local runtime keeps agent logs. */
  stateDir: string
  /** Environment of runtime CLIs and tmux (TMUX_TMPDIR, DOCKER_HOST, KUBECONFIG...); default process.env. */
  env?: NodeJS.ProcessEnv
  /** Executables, for tests and unusual installs. */
  bins?: {tmux?: string; docker?: string; podman?: string; bwrap?: string}
  /**
   * The broker's default runtime (a type or a `runtimes` name), used when no profile is active;
   * see chooseDefaultRuntime. Without it the engines are probed (tests of the probe only).
   */
  defaultRuntime?: string
}

export const RUNTIME_TYPES = ['local', 'docker', 'podman', 'kubernetes'] as const

export function createRuntime(name: string, cfg: RuntimeSettings, opts: RuntimeFactoryOptions): Runtime {
  switch (cfg.type) {
    case 'local':
      return new LocalTmuxRuntime({stateDir: opts.stateDir, env: opts.env, tmux: opts.bins?.tmux, sandbox: sandboxOf(name, cfg), envPassthrough: passthroughOf(name, cfg), nice: niceOf(name, cfg), bwrap: opts.bins?.bwrap, isolation: isolationOf(name, cfg)})
    case 'docker':
      return new DockerRuntime({host: cfg.host, env: opts.env, bin: opts.bins?.docker, defaultImage: cfg.image, stateDir: opts.stateDir})
    case 'podman':
      return new PodmanRuntime({host: cfg.host, env: opts.env, bin: opts.bins?.podman, defaultImage: cfg.image, stateDir: opts.stateDir})
    case 'kubernetes':
      return new KubernetesRuntime({context: cfg.context, namespace: cfg.namespace, env: opts.env})
    case 'container':
      throw new Error(`runtime ${JSON.stringify(name)}: type \`container\` is not supported by this broker yet (use docker, podman, kubernetes or local)`)
    default:
      throw new Error(`runtime ${JSON.stringify(name)} has unknown type ${JSON.stringify(cfg.type)} (use one of ${RUNTIME_TYPES.join(', ')})`)
  }
}

function sandboxOf(name: string, cfg: RuntimeSettings): 'bubblewrap' | 'none' {
  const v = cfg.sandbox ?? 'bubblewrap'
  if (v !== 'bubblewrap' && v !== 'none') throw new Error(`runtime ${JSON.stringify(name)}: \`sandbox\` must be bubblewrap or none, not ${JSON.stringify(v)}`)
  return v
}

/** Network, uid and egress of a sandboxed local runtime (docs/runtimes.md, "What an agent can reach"). */
function isolationOf(name: string, cfg: RuntimeSettings): IsolationSettings {
  const network = cfg.network ?? DEFAULT_NETWORK
  if (network !== 'isolated' && network !== 'host') throw new Error(`runtime ${JSON.stringify(name)}: \`network\` must be isolated or host, not ${JSON.stringify(network)}`)
  const userNamespace = cfg.user_namespace ?? 'required'
  if (userNamespace !== 'required' && userNamespace !== 'off') throw new Error(`runtime ${JSON.stringify(name)}: \`user_namespace\` must be required or off, not ${JSON.stringify(userNamespace)}`)
  const egressAllow = cfg.egress_allow ?? []
  if (!Array.isArray(egressAllow)) throw new Error(`runtime ${JSON.stringify(name)}: \`egress_allow\` must be a list of host:port`)
  for (const e of egressAllow) parseHostPort(String(e))
  return {network, userNamespace, egressAllow: egressAllow.map(String), runtimeName: name}
}

/** Default 10: on a workstation running many agents, the Hub, hooks and the user's programs go first. */
function niceOf(name: string, cfg: RuntimeSettings): number {
  const v = cfg.nice ?? 10
  if (!Number.isInteger(v) || v < 0 || v > 19) throw new Error(`runtime ${JSON.stringify(name)}: \`nice\` must be a whole number from 0 to 19, not ${JSON.stringify(v)}`)
  return v
}

function passthroughOf(name: string, cfg: RuntimeSettings): string[] {
  const v = cfg.env_passthrough ?? []
  if (!Array.isArray(v) || v.some((k) => typeof k !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k))) throw new Error(`runtime ${JSON.stringify(name)}: \`env_passthrough\` must be a list of environment variable names`)
  return v
}

/**
 * Probes the engines (docker if its engine answers, else podman if its engine answers, else
 * local). Only the first start of a broker asks this; later starts read the stored answer.
 */
export async function defaultRuntime(opts: RuntimeFactoryOptions): Promise<Runtime> {
  const docker = createRuntime('docker', {type: 'docker'}, opts)
  const podman = createRuntime('podman', {type: 'podman'}, opts)
  // Both probes at once: a workstation start should not wait for two timeouts in a row.
  const [d, p] = await Promise.all([docker.available(), podman.available()])
  if (d) return docker
  if (p) return podman
  return createRuntime('local', {type: 'local'}, opts)
}

export interface SelectedRuntime {
  runtime: Runtime
  /** Name in `runtimes`, or a bare type. */
  runtimeName: string
  /** The `runtimes` entry it was built from (`{type}` for a bare type): enough to build it again. */
  settings: RuntimeSettings
  profileName?: string
  profile?: ProfileSettings
  /** The runtime's env with the profile's env merged over it. */
  env: Record<string, string>
}

/**
 * The runtime of a profile (argument, else `active_profile`); with neither, the workstation
 * default. A profile may name a bare type (`local`, `docker`...) that has no `runtimes` entry.
 */
export async function selectRuntime(settings: RuntimeSelectionSettings, opts: RuntimeFactoryOptions, profileName?: string): Promise<SelectedRuntime> {
  const pname = profileName || settings.active_profile
  if (!pname) return runtimeNamed(settings, opts.defaultRuntime ?? (await defaultRuntime(opts)).type, opts)
  const profile = settings.profiles?.[pname]
  if (!profile) throw new Error(`profile ${JSON.stringify(pname)} is not defined in settings \`profiles\` (have: ${Object.keys(settings.profiles ?? {}).join(', ') || 'none'})`)
  if (!profile.runtime) throw new Error(`profile ${JSON.stringify(pname)} has no \`runtime\``)
  const rname = profile.runtime
  const cfg = settingsOf(settings, rname)
  if (!cfg) throw new Error(`profile ${JSON.stringify(pname)} names runtime ${JSON.stringify(rname)}, which is not defined in settings \`runtimes\``)
  return {runtime: createRuntime(rname, cfg, opts), runtimeName: rname, settings: cfg, profileName: pname, profile, env: mergeEnv(cfg.env, profile.env)}
}

/** The `runtimes` entry of a name, or `{type}` for a bare type with no entry; undefined otherwise. */
export function settingsOf(settings: RuntimeSelectionSettings, name: string): RuntimeSettings | undefined {
  return settings.runtimes?.[name] ?? ((RUNTIME_TYPES as readonly string[]).includes(name) ? {type: name} : undefined)
}

/** The runtime of a `runtimes` name or a bare type (the default runtime, or an agent's own). */
export function runtimeNamed(settings: RuntimeSelectionSettings, name: string, opts: RuntimeFactoryOptions): SelectedRuntime {
  const cfg = settingsOf(settings, name)
  if (!cfg) throw new Error(`runtime ${JSON.stringify(name)} is not defined in settings \`runtimes\` and is not a runtime type (${RUNTIME_TYPES.join(', ')})`)
  return {runtime: createRuntime(name, cfg, opts), runtimeName: name, settings: cfg, env: mergeEnv(cfg.env)}
}

/** Names a default runtime may take: the types, and the names of settings `runtimes`. */
export function runtimeNames(settings: RuntimeSelectionSettings): string[] {
  return [...new Set([...RUNTIME_TYPES, ...Object.keys(settings.runtimes ?? {})])]
}

/** Later layers win: runtime env, profile env, harness env, then the agent's own (SVC_*) env. */
export function mergeEnv(...layers: Array<Record<string, string> | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const l of layers) if (l) for (const [k, v] of Object.entries(l)) out[k] = String(v)
  return out
}
