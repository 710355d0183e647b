/**
 * Builds the Runtime an agent runs on from settings: `profiles.<p>.runtime` names an entry of
 * `runtimes` ({type, host, context, namespace, env}); with no profile, a workstation's default is
 * docker when its engine answers, else podman when its engine answers, else local (tmux).
 */
import type {HarnessConfig} from '../harness.js'
import type {Runtime} from '../runtime.js'
import {DockerRuntime} from './docker.js'
import {KubernetesRuntime} from './kubernetes.js'
import {LocalTmuxRuntime} from './local-tmux.js'
import {PodmanRuntime} from './podman.js'

/** One entry of settings `runtimes` (spec field names; `local` is this project's addition). */
export interface RuntimeSettings {
  type: string
  host?: string
  context?: string
  namespace?: string
  sync?: string
  gke?: boolean
  env?: Record<string, string>
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
  bins?: {tmux?: string; docker?: string; podman?: string}
}

export const RUNTIME_TYPES = ['local', 'docker', 'podman', 'kubernetes'] as const

export function createRuntime(name: string, cfg: RuntimeSettings, opts: RuntimeFactoryOptions): Runtime {
  switch (cfg.type) {
    case 'local':
      return new LocalTmuxRuntime({stateDir: opts.stateDir, env: opts.env, tmux: opts.bins?.tmux})
    case 'docker':
      return new DockerRuntime({host: cfg.host, env: opts.env, bin: opts.bins?.docker})
    case 'podman':
      return new PodmanRuntime({host: cfg.host, env: opts.env, bin: opts.bins?.podman})
    case 'kubernetes':
      return new KubernetesRuntime({context: cfg.context, namespace: cfg.namespace, env: opts.env})
    case 'container':
      throw new Error(`runtime ${JSON.stringify(name)}: type \`container\` is not supported by this broker yet (use docker, podman, kubernetes or local)`)
    default:
      throw new Error(`runtime ${JSON.stringify(name)} has unknown type ${JSON.stringify(cfg.type)} (use one of ${RUNTIME_TYPES.join(', ')})`)
  }
}

/** docker if its engine answers, else podman if its engine answers, else local. */
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
  /** Name in `runtimes`, or the type for the workstation default. */
  runtimeName: string
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
  if (!pname) {
    const runtime = await defaultRuntime(opts)
    return {runtime, runtimeName: runtime.type, env: {}}
  }
  const profile = settings.profiles?.[pname]
  if (!profile) throw new Error(`profile ${JSON.stringify(pname)} is not defined in settings \`profiles\` (have: ${Object.keys(settings.profiles ?? {}).join(', ') || 'none'})`)
  if (!profile.runtime) throw new Error(`profile ${JSON.stringify(pname)} has no \`runtime\``)
  const rname = profile.runtime
  const cfg = settings.runtimes?.[rname] ?? ((RUNTIME_TYPES as readonly string[]).includes(rname) ? {type: rname} : undefined)
  if (!cfg) throw new Error(`profile ${JSON.stringify(pname)} names runtime ${JSON.stringify(rname)}, which is not defined in settings \`runtimes\``)
  return {runtime: createRuntime(rname, cfg, opts), runtimeName: rname, profileName: pname, profile, env: mergeEnv(cfg.env, profile.env)}
}

/** Later layers win: runtime env, profile env, harness env, then the agent's own (SVC_*) env. */
export function mergeEnv(...layers: Array<Record<string, string> | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const l of layers) if (l) for (const [k, v] of Object.entries(l)) out[k] = String(v)
  return out
}
