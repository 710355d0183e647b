/**
 * Where an agent's listening ports are, read from the kernel, never from anything the agent
 * writes: its process tree (from the runtime's first process, Runtime.agentProcess), the
 * network namespace those processes are in, and that namespace's TCP table.
 *
 * - Its own network namespace (local runtime, `network: isolated`): every listener of that
 *   namespace, except its forwarders' ports (egress-plan.ts), is the agent's.
 * - The host's network (containers with `--network host`, `network: host`, `sandbox: none`): a
 *   listener of the host's table is the agent's only when one of its processes holds the socket
 *   (`/proc/<pid>/fd/*` -> `socket:[inode]`); the host's other listeners are never its ports.
 */
import {readdirSync, readFileSync, readlinkSync} from 'node:fs'
import {parseTcpTable, type TcpListener} from './proc-net.js'

export interface AgentSockets {
  /** A process in the agent's own network namespace, or null when it shares the host's. */
  nsPid: number | null
  /** That namespace's identity (`net:[inode]`), checked again when a forwarder enters it. */
  netns: string | null
  listeners: TcpListener[]
}

const read = (path: string) => {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}
const link = (path: string) => {
  try {
    return readlinkSync(path)
  } catch {
    return null
  }
}

/** `root` and its descendants (from each process's parent in `/proc/<pid>/stat`). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const stat = read(`/proc/${name}/stat`)
    // The command name (field 2) is in parentheses and may hold spaces: read after its last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    if (!ppid) continue
    const list = children.get(ppid)
    if (list) list.push(Number(name))
    else children.set(ppid, [Number(name)])
  }
  const out: number[] = []
  const queue = [root]
  while (queue.length && out.length < 100_000) {
    const pid = queue.shift()!
    out.push(pid)
    queue.push(...(children.get(pid) ?? []))
  }
  return out
}

function tables(prefix: string): TcpListener[] {
  return [...parseTcpTable(read(`${prefix}/net/tcp`), 4), ...parseTcpTable(read(`${prefix}/net/tcp6`), 6)]
}

/**
 * The listening sockets of the network namespace `pid` is in, when that is still `netns` (null
 * otherwise): all of them the agent's but `excludePorts` (its forwarders'). Reads only that
 * namespace's table, so a later reading of an agent known to be in its own namespace costs a
 * few small files rather than a pass over every process of the host.
 */
export function namespaceSockets(pid: number, netns: string, excludePorts: number[]): AgentSockets | null {
  if (link(`/proc/${pid}/ns/net`) !== netns) return null
  const excluded = new Set(excludePorts)
  return {nsPid: pid, netns, listeners: tables(`/proc/${pid}`).filter((l) => !excluded.has(l.port))}
}

/** The agent's listening sockets, found from its first process. */
export function agentSockets(root: number, excludePorts: number[]): AgentSockets {
  const tree = processTree(root)
  const hostNs = link('/proc/self/ns/net')
  for (const pid of tree) {
    const ns = link(`/proc/${pid}/ns/net`)
    if (!ns || ns === hostNs) continue
    return namespaceSockets(pid, ns, excludePorts)!
  }
  const held = new Set<number>()
  for (const pid of tree) {
    let fds: string[] = []
    try {
      fds = readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      const m = /^socket:\[(\d+)\]$/.exec(link(`/proc/${pid}/fd/${fd}`) ?? '')
      if (m) held.add(Number(m[1]))
    }
  }
  return {nsPid: null, netns: null, listeners: tables('/proc/self').filter((l) => held.has(l.inode))}
}

/**
 * Of listeners found held by an agent's processes on the host's network, those whose socket (the
 * same inode) still listens on its port in the host's table: still the socket the agent made,
 * whoever holds it now. A new socket on that port (the agent's server restarted, or anyone else's)
 * has a new inode and is not among them: finding its holder needs agentSockets again.
 */
export function stillListening(listeners: TcpListener[]): TcpListener[] {
  const now = new Set(tables('/proc/self').map((l) => `${l.inode}/${l.port}`))
  return listeners.filter((l) => now.has(`${l.inode}/${l.port}`))
}

/** The ports listened on, ascending, each once. */
export const listenedPorts = (s: AgentSockets): number[] => [...new Set(s.listeners.map((l) => l.port))].sort((a, b) => a - b)
