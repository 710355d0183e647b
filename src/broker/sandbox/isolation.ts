/**
 * The network and user namespaces of a local sandbox: checks bwrap can make them here, writes the
 * agent's sandbox directory (its Unix sockets, plan, and passwd/group naming its uid), opens the
 * broker's side of its network (egress.ts), and returns what the bwrap policy, the environment
 * and the command gain. Host side; the decisions are in egress-plan.ts and policy.ts.
 */
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {runCommand} from '../runtimes/run-command.js'
import {allowedDestinations, egressEnv, egressPlan, forwarderScript, identityFile, SANDBOX_NET_DIR, type Destination, type EgressPlan} from './egress-plan.js'
import {closeEgress, MAX_SOCKET_PATH, openEgress, resumeEgress} from './egress.js'
import {findExecutable} from './host.js'
import type {SandboxPolicy} from './policy.js'

/** The uid (and gid) agents run as inside a user namespace when the broker runs as root. */
export const SANDBOX_UID = 1000

export interface IsolationSettings {
  /** `isolated`: own network namespace with only the allowed destinations; `host`: the host's network. */
  network: 'host' | 'isolated'
  /** `required`: a root broker runs agents as SANDBOX_UID in a user namespace (refused: the start fails); `off`: as root without capabilities. */
  userNamespace: 'required' | 'off'
  /** Settings `egress_allow`: more host:port pairs. */
  egressAllow: string[]
  /** The runtime's name in settings, for messages. */
  runtimeName: string
}

export interface IsolationInput {
  bwrap: string
  /** The agent's own directory for sockets and identity files (`<stateDir>/sb/<session>`). */
  dir: string
  home: string
  env: Record<string, string>
  command: string[]
  /** PATH to find socat on. */
  path: string | undefined
  /** The broker's uid (process.getuid()). */
  brokerUid: number
  /** The harness may start while the forwarders come up (egress-plan.ts, harnessStartsLate). */
  overlap?: boolean
}

export interface Isolation {
  policy: Pick<SandboxPolicy, 'network' | 'uid' | 'overlays'>
  readable: string[]
  env: Record<string, string>
  /** The forwarders' parts of the sandbox's launcher (launcher.ts), with an isolated network. */
  forwarders?: {start: string; wait: string}
  allowed: Destination[]
}

/** Decides, checks and opens; on failure nothing is left open. */
export async function prepareIsolation(s: IsolationSettings, i: IsolationInput): Promise<Isolation> {
  const uid = s.userNamespace === 'required' && i.brokerUid === 0 ? SANDBOX_UID : undefined
  const isolated = s.network === 'isolated'
  const out: Isolation = {policy: {network: s.network, uid}, readable: [], env: {}, allowed: []}
  if (!isolated && uid === undefined) return out
  const problem = await namespaceProblem(i.bwrap, isolated, uid)
  if (problem) {
    const fix = [
      uid !== undefined ? `set runtimes.${s.runtimeName}.user_namespace: off to run agents as root without capabilities` : '',
      isolated ? `set runtimes.${s.runtimeName}.network: host to share the host's network` : '',
    ].filter(Boolean)
    throw new Error(`the local runtime runs each agent${uid !== undefined ? ` as uid ${uid} in a user namespace (the broker runs as root)` : ''}${isolated ? `${uid !== undefined ? ' and' : ''} in a network namespace of its own` : ''}, and bwrap cannot make one here (${problem}): allow them on this host (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone, AppArmor's restrict_unprivileged_userns), or ${fix.join(', or ')}`)
  }
  mkdirSync(i.dir, {recursive: true, mode: 0o700})
  if (uid !== undefined) {
    const overlays: Array<{source: string; dest: string}> = []
    for (const kind of ['passwd', 'group'] as const) {
      const host = `/etc/${kind}`
      if (!existsSync(host)) continue
      writeFileSync(join(i.dir, kind), identityFile(readFileSync(host, 'utf8'), uid, kind, i.home), {mode: 0o644})
      overlays.push({source: join(i.dir, kind), dest: host})
    }
    out.policy.overlays = overlays
  }
  if (!isolated) return out
  const socat = findExecutable('socat', i.path)
  if (!socat) throw new Error(`an agent's isolated network needs socat (its forwarders inside the sandbox), and socat is not installed or not on PATH: install it (Debian: apt-get install socat), or set runtimes.${s.runtimeName}.network: host to share the host's network`)
  out.allowed = allowedDestinations({env: i.env, command: i.command, extra: s.egressAllow})
  const plan = egressPlan(out.allowed, SANDBOX_NET_DIR, s.runtimeName)
  const netDir = socketDir(i.dir)
  await openEgress(netDir, plan)
  out.policy.overlays = [...(out.policy.overlays ?? []), {source: netDir, dest: SANDBOX_NET_DIR}]
  out.env = egressEnv(plan)
  out.forwarders = forwarderScript(plan, socat, i.overlap)
  if (!socat.startsWith('/usr/') && !socat.startsWith('/bin/')) out.readable.push(socat)
  return out
}

/** Closes an agent's network (when it had one) and removes its sandbox directory. */
export async function releaseIsolation(dir: string): Promise<void> {
  const net = netDirOf(dir)
  if (net) await closeEgress(net)
  rmSync(dir, {recursive: true, force: true})
}

/** Opens the sockets of an agent found running, when this process does not serve them yet (a restarted broker). */
export async function resumeIsolation(dir: string): Promise<void> {
  const net = netDirOf(dir)
  if (net) await resumeEgress(net)
}

/**
 * The directory of the broker's sockets for an agent: `<dir>/net` when its socket paths fit the
 * kernel's limit, else a private directory of the system's temp directory (a deep broker state
 * directory). Its path is kept in `<dir>/net-dir`, for releaseIsolation and resumeIsolation.
 */
function socketDir(dir: string): string {
  let net = join(dir, 'net')
  if (Buffer.byteLength(join(net, 'proxy.sock')) > MAX_SOCKET_PATH) net = mkdtempSync(join(tmpdir(), 'svc-egress-'))
  else mkdirSync(net, {recursive: true, mode: 0o700})
  writeFileSync(join(dir, 'net-dir'), net, {mode: 0o600})
  return net
}

/** The ports an agent's own forwarders listen on inside (its plan's): not the agent's ports. */
export function egressPorts(dir: string): number[] {
  const net = netDirOf(dir)
  // On the host's network there is no forwarder of svc's inside the agent's reach.
  if (net === undefined) return []
  // An isolated network whose plan cannot be read: its forwarders' ports are unknown, and taken
  // for none they would count as the agent's own ports (reachable through previews), for as
  // long as a reading of its first process is kept. Refused instead; the next asking reads again.
  const plan = JSON.parse(readFileSync(join(net, 'plan.json'), 'utf8')) as EgressPlan
  return [...plan.loopback.map((l) => l.port), ...(plan.proxy ? [plan.proxy.port] : [])]
}

function netDirOf(dir: string): string | undefined {
  try {
    return readFileSync(join(dir, 'net-dir'), 'utf8')
  } catch {
    return undefined
  }
}

/**
 * Why bwrap cannot make these namespaces here, or null. A success is remembered for a while (a
 * process per agent start is not free); a failure never is, so a fixed host is seen at once.
 */
export async function namespaceProblem(bwrap: string, net: boolean, uid: number | undefined): Promise<string | null> {
  const key = `${bwrap}|${net}|${uid}`
  if ((workedUntil.get(key) ?? 0) > Date.now()) return null
  const args = ['--ro-bind', '/', '/', '--unshare-pid', ...(net ? ['--unshare-net'] : []), ...(uid !== undefined ? ['--unshare-user', '--uid', String(uid), '--gid', String(uid)] : []), '--die-with-parent', '--cap-drop', 'ALL', '--', 'true']
  try {
    const r = await runCommand(bwrap, args, {timeoutMs: 10_000})
    if (r.code === 0) workedUntil.set(key, Date.now() + 5 * 60_000)
    return r.code === 0 ? null : String(r.stderr).trim() || `bwrap exited with code ${r.code}`
  } catch (err) {
    return (err as Error).message
  }
}
const workedUntil = new Map<string, number>()
