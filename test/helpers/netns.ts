/**
 * A test network: Linux network namespaces joined to the host namespace by veth pairs (iproute2),
 * so a broker runs as on another host and reaches the Hub replicas only over its veth link.
 *
 * Each namespace is `svcns-<test pid>-<n>` with a /30 link: `hostIp` on the host side, `nsIp`
 * inside (plus `lo` up). Replicas in the host namespace listen on 0.0.0.0 (or `hostIp`); a
 * process started with `spawnIn` reaches them at `http://<hostIp>:<port>`. PostgreSQL stays in
 * the host namespace, reached by the replicas only.
 *
 * Clean-up: `dispose` deletes the namespace (which deletes its veth pair); an exit handler
 * deletes what this process made; and every `netnsSupport` first deletes namespaces left by
 * test processes that no longer run (a killed vitest worker), so nothing piles up.
 *
 * Where namespaces cannot be made (no root, no iproute2, a container without CAP_NET_ADMIN) a
 * test skips with the reason in its name, except under CI (`CI=true`), where it fails.
 */
import {spawn, spawnSync, type ChildProcess, type SpawnOptions} from 'node:child_process'
import {randomInt} from 'node:crypto'

const PREFIX = 'svcns-'
const mine = new Set<string>()
let counter = 0
let exitHook = false

function ip(args: string[]): {ok: boolean; out: string; err: string} {
  const r = spawnSync('ip', args, {encoding: 'utf8', timeout: 10_000})
  return {ok: r.status === 0, out: r.stdout ?? '', err: (r.stderr ?? '') + (r.error ? String(r.error) : '')}
}

function must(args: string[]): string {
  const r = ip(args)
  if (!r.ok) throw new Error(`ip ${args.join(' ')} failed: ${r.err.trim()}`)
  return r.out
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Deletes namespaces whose test process is gone (a previous run killed before its clean-up). */
export function removeStaleNamespaces(): void {
  for (const line of ip(['netns', 'list']).out.split('\n')) {
    const name = line.split(' ')[0]
    const m = new RegExp(`^${PREFIX}(\\d+)-\\d+$`).exec(name)
    if (m && !alive(Number(m[1]))) ip(['netns', 'del', name])
  }
}

let support: {ok: boolean; reason: string} | null = null

/**
 * Whether this machine lets the test make namespaces (tried once per process, with a real
 * namespace and veth pair). Under CI a failure throws: the tests across hosts must run there.
 */
export function netnsSupport(): {ok: boolean; reason: string} {
  if (!support) {
    removeStaleNamespaces()
    try {
      const probe = createNetns()
      probe.dispose()
      support = {ok: true, reason: ''}
    } catch (err) {
      support = {ok: false, reason: (err as Error).message.split('\n')[0]}
    }
  }
  if (!support.ok && process.env.CI === 'true') throw new Error(`network namespaces are required under CI and could not be made: ${support.reason}`)
  return support
}

export interface NetNs {
  name: string
  /** The host side of the link: what a process inside dials to reach the host namespace. */
  hostIp: string
  /** The namespace's side of the link. */
  nsIp: string
  /** Runs a process inside the namespace (through `ip netns exec`, which execs it: its pid is the process's). */
  spawnIn(command: string, args: string[], opts?: SpawnOptions): ChildProcess
  /** Runs a command inside the namespace to completion (asynchronously: a listener in this process still answers). */
  runIn(command: string, args: string[]): Promise<{code: number | null; stdout: string; stderr: string}>
  /** Takes the link down (`false`) or up again: a network cut between this "host" and the rest. */
  setLink(up: boolean): void
  /** Deletes the namespace and its veth pair (processes inside keep running, without network). */
  dispose(): void
}

/** A /30 in 10.200.0.0/13 not used by any address of the host (random: test processes run side by side). */
function freeSubnet(): [string, string] {
  const used = ip(['-4', '-o', 'addr', 'show']).out
  for (let i = 0; i < 50; i++) {
    const n = randomInt(0, 1 << 17) // 2^17 /30 blocks in a /13
    const base = (10 << 24) + (200 << 16) + n * 4
    const dot = (v: number) => [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.')
    const [host, inner] = [dot(base + 1), dot(base + 2)]
    if (!used.includes(` ${host}/`) && !used.includes(` ${inner}/`)) return [host, inner]
  }
  throw new Error('no free /30 in 10.200.0.0/13')
}

/** Makes one namespace with its veth link; throws (after removing what it made) when it cannot. */
export function createNetns(): NetNs {
  const n = counter++
  const name = `${PREFIX}${process.pid}-${n}`
  // Interface names are at most 15 characters: pid in base 36 and the counter.
  const tag = `${process.pid.toString(36)}${n.toString(36)}`.slice(-10)
  const [hostIf, nsIf] = [`svh${tag}`, `svn${tag}`]
  const [hostIp, nsIp] = freeSubnet()
  must(['netns', 'add', name])
  mine.add(name)
  if (!exitHook) {
    exitHook = true
    process.once('exit', () => {
      for (const ns of mine) ip(['netns', 'del', ns])
    })
  }
  const dispose = () => {
    ip(['netns', 'del', name])
    ip(['link', 'del', hostIf]) // gone with the namespace already, unless moving it failed
    mine.delete(name)
  }
  try {
    must(['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf])
    must(['link', 'set', nsIf, 'netns', name])
    must(['addr', 'add', `${hostIp}/30`, 'dev', hostIf])
    must(['link', 'set', hostIf, 'up'])
    must(['netns', 'exec', name, 'ip', 'addr', 'add', `${nsIp}/30`, 'dev', nsIf])
    must(['netns', 'exec', name, 'ip', 'link', 'set', nsIf, 'up'])
    must(['netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up'])
  } catch (err) {
    dispose()
    throw err
  }
  return {
    name,
    hostIp,
    nsIp,
    spawnIn: (command, args, opts = {}) => spawn('ip', ['netns', 'exec', name, command, ...args], opts),
    runIn: (command, args) =>
      new Promise((resolve, reject) => {
        const child = spawn('ip', ['netns', 'exec', name, command, ...args], {stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000})
        let [stdout, stderr] = ['', '']
        child.stdout!.on('data', (d) => (stdout += d))
        child.stderr!.on('data', (d) => (stderr += d))
        child.on('error', reject)
        child.on('close', (code) => resolve({code, stdout, stderr}))
      }),
    setLink: (up) => must(['link', 'set', hostIf, up ? 'up' : 'down']),
    dispose,
  }
}
