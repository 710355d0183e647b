/**
 * What a container needs from the broker's host, read here so container-cli.ts stays a pure
 * argv builder: the engine flags this host needs (podman), the hard resource limits it allows,
 * and the host paths an agent's container mounts (worktree, HOME, the checkout's git parts, the
 * svc program) with the environment that goes with them.
 */
import {existsSync, mkdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import type {AgentSpec} from '../runtime.js'
import {findExecutable, writeSvcShim} from '../sandbox/host.js'
import type {ContainerCli} from './container-cli.js'

export interface Mount {
  path: string
  readOnly: boolean
}

export interface HostPlan {
  mounts: Mount[]
  /** Flags of `run` besides the agent's own (network, ulimits). */
  flags: string[]
  /** Variables set for the container (PATH with svc first, HOME). */
  env: Record<string, string>
}

/** PATH of the base image (Debian), behind the directory holding `svc`. */
export const CONTAINER_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/** Hard limits of this process (`/proc/self/limits`), which a container may not exceed. */
export function hardLimits(text?: string): {nofile?: number; nproc?: number} {
  let t = text
  if (t === undefined) {
    try {
      t = readFileSync('/proc/self/limits', 'utf8')
    } catch {
      return {}
    }
  }
  const hard = (label: string) => {
    const m = new RegExp(`^${label}\\s+\\S+\\s+(\\S+)`, 'm').exec(t!)
    return m && /^\d+$/.test(m[1]) ? Number(m[1]) : undefined
  }
  return {nofile: hard('Max open files'), nproc: hard('Max processes')}
}

/** `/proc/sys/kernel/pid_max`: no more processes than that can exist. */
function pidMax(): number | undefined {
  try {
    const n = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim())
    return Number.isInteger(n) && n > 0 ? n : undefined
  } catch {
    return undefined
  }
}

/**
 * The nproc limit of a container: the hard limit, but never above pid_max. Seen on a VM whose
 * hard nproc limit (96364) was above its pid_max (32768): runc could not set the hard limit
 * itself ("error setting rlimit type 6: operation not permitted") and pid_max worked.
 */
export function cappedNproc(hard: number | undefined, pidMaxValue: number | undefined): number | undefined {
  if (hard === undefined) return pidMaxValue
  return pidMaxValue === undefined ? hard : Math.min(hard, pidMaxValue)
}

/**
 * podman's defaults fail on some hosts: crun on hybrid cgroups (runc works), the systemd cgroup
 * manager where systemd is not PID 1. So runc when it is installed, cgroupfs without systemd.
 */
export function podmanEngineFlags(env: NodeJS.ProcessEnv, hasSystemd = existsSync('/run/systemd/system')): string[] {
  const flags: string[] = []
  if (findExecutable('runc', env.PATH)) flags.push('--runtime', 'runc')
  if (!hasSystemd) flags.push('--cgroup-manager', 'cgroupfs')
  return flags
}

/**
 * The host side of an agent's container: its worktree, HOME and writable paths read-write and
 * its readable paths read-only, all at their host paths (what the Hub records, the agent sees);
 * the svc program mounted with a `svc` command first on PATH; the host's network (the Hub on
 * 127.0.0.1 stays reachable) and, for podman, the host's hard ulimits (podman's defaults can
 * exceed them and then nothing starts).
 */
export function containerHostPlan(cli: ContainerCli, spec: AgentSpec, stateDir: string): HostPlan {
  const home = spec.home ?? join(stateDir, 'homes', `svc-${spec.agentId}`)
  mkdirSync(home, {recursive: true, mode: 0o700})
  const binDir = join(stateDir, 'container-bin')
  const shim = writeSvcShim(binDir)
  const mounts = new Map<string, boolean>()
  for (const p of [...(spec.readablePaths ?? []), ...shim.readable]) if (existsSync(p)) mounts.set(p, true)
  for (const p of [...(spec.writablePaths ?? []), ...(spec.workdir ? [spec.workdir] : []), home]) mounts.set(p, false)
  const flags = ['--network', 'host']
  if (cli === 'podman') {
    const lim = hardLimits()
    if (lim.nofile) flags.push('--ulimit', `nofile=${lim.nofile}:${lim.nofile}`)
    const nproc = cappedNproc(lim.nproc, pidMax())
    if (nproc) flags.push('--ulimit', `nproc=${nproc}:${nproc}`)
  }
  const depth = (p: string) => p.split('/').length
  return {
    mounts: [...mounts.entries()].map(([path, readOnly]) => ({path, readOnly})).sort((a, b) => depth(a.path) - depth(b.path)),
    flags,
    env: {PATH: `${binDir}:${spec.env.PATH ?? CONTAINER_PATH}`, HOME: home},
  }
}

/** `-v path:path[:ro]`; a path with `:` or `,` cannot be said to the CLI unambiguously. */
export function mountArgs(mounts: Mount[]): string[] {
  const args: string[] = []
  for (const m of mounts) {
    if (!m.path.startsWith('/') || /[:,]/.test(m.path)) throw new Error(`cannot mount ${JSON.stringify(m.path)} into a container: use an absolute path without ':' or ','`)
    args.push('-v', `${m.path}:${m.path}${m.readOnly ? ':ro' : ''}`)
  }
  return args
}
