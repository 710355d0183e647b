/**
 * Connections from the broker to an agent's port, for previews through the Hub.
 *
 * In the agent's own network namespace, the broker runs one forwarder per (agent, port): socat,
 * entered into that namespace alone with nsenter (never its mount, PID or user namespace: the
 * agent cannot see or signal it), listening on a Unix socket in a private directory of the
 * broker's and connecting each connection to the one address and port fixed when it started.
 * A connection costs a fork of that socat, not a process start. The namespace is handed to
 * nsenter as an open file checked against the one the ports were read from, so a PID reused
 * meanwhile cannot make it enter another.
 *
 * An agent on the host's network is connected to directly, and only on a port one of its own
 * processes listens on (agent-sockets.ts): a request never chooses a host, and never reaches a
 * listener of the host's that is not the agent's.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {closeSync, existsSync, fstatSync, mkdtempSync, openSync, rmSync, statSync} from 'node:fs'
import net from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {findExecutable} from '../sandbox/host.js'
import type {AgentSockets} from './agent-sockets.js'
import {connectAddress} from './proc-net.js'

// A broker process that ends leaves no forwarder holding an agent's namespace.
const live = new Set<PortIngress>()
process.once('exit', () => {
  for (const i of live) i.close()
})

interface Forwarder {
  child: ChildProcess
  socket: string
  netns: string
}

export class PortIngress {
  private dir: string | null = null
  private readonly forwarders = new Map<string, Forwarder>()

  constructor(private readonly path: string | undefined = process.env.PATH) {
    live.add(this)
  }

  /** A connection to `port` of the agent whose sockets are `s`; throws when it does not listen there. */
  async connect(agentId: string, s: AgentSockets, port: number): Promise<net.Socket> {
    const address = connectAddress(s.listeners, port)
    if (!address) throw Object.assign(new Error(`the agent does not listen on port ${port}`), {code: 'not_found'})
    if (s.nsPid === null) return dial({host: address, port})
    const path = await this.forwarder(agentId, s, address, port)
    // A forwarder just started has bound its socket file before it listens: refused meanwhile.
    for (let attempt = 0; ; attempt++) {
      try {
        return await dial({path})
      } catch (err) {
        if (attempt >= 200 || !['ECONNREFUSED', 'ENOENT'].includes((err as {code?: string}).code ?? '')) throw err
        await new Promise((r) => setTimeout(r, 10))
      }
    }
  }

  /** Agents with forwarders. */
  agents(): string[] {
    return [...new Set([...this.forwarders.keys()].map((k) => k.split('/')[0]))]
  }

  /** Stops the agent's forwarders into any namespace but `netns` (all of them for null). */
  keepOnly(agentId: string, netns: string | null): void {
    for (const [key, f] of this.forwarders) {
      if (!key.startsWith(`${agentId}/`) || f.netns === netns) continue
      f.child.kill('SIGTERM')
      this.forwarders.delete(key)
    }
  }

  /** Stops every forwarder (the broker stops). */
  close(): void {
    for (const agentId of this.agents()) this.keepOnly(agentId, null)
    if (this.dir) rmSync(this.dir, {recursive: true, force: true})
    this.dir = null
    live.delete(this)
  }

  private async forwarder(agentId: string, s: AgentSockets, address: string, port: number): Promise<string> {
    const key = `${agentId}/${address}/${port}`
    const known = this.forwarders.get(key)
    if (known && known.netns === s.netns && known.child.exitCode === null && known.child.signalCode === null) return known.socket
    if (known) {
      known.child.kill('SIGTERM')
      this.forwarders.delete(key)
    }
    const nsenter = findExecutable('nsenter', this.path)
    const socat = findExecutable('socat', this.path)
    const setpriv = findExecutable('setpriv', this.path)
    if (!nsenter || !socat) throw new Error('previews of an agent with its own network need nsenter (util-linux) and socat on the broker\'s PATH')
    // Short: a Unix socket path has at most 107 bytes.
    this.dir ??= mkdtempSync(join(tmpdir(), 'svc-ports-'))
    const socket = join(this.dir, `${this.forwarders.size}-${Date.now().toString(36)}.sock`)
    const nsFd = openSync(`/proc/${s.nsPid}/ns/net`, 'r')
    let child: ChildProcess
    try {
      if (`net:[${fstatSync(nsFd).ino}]` !== s.netns) throw new Error('the agent\'s network namespace changed; try again')
      const target = address.includes(':') ? `TCP6:[${address}]:${port}` : `TCP4:${address}:${port}`
      // fd 3 of nsenter is the namespace file opened above. setpriv --pdeathsig: the forwarder
      // (nsenter execs socat in its place) ends with the broker, however the broker ends.
      const argv = [nsenter, '--net=/proc/self/fd/3', '--', socat, `UNIX-LISTEN:${socket},fork,mode=600`, target]
      child = setpriv ? spawn(setpriv, ['--pdeathsig', 'TERM', '--', ...argv], {stdio: ['ignore', 'ignore', 'pipe', nsFd]}) : spawn(argv[0], argv.slice(1), {stdio: ['ignore', 'ignore', 'pipe', nsFd]})
    } finally {
      closeSync(nsFd)
    }
    let stderr = ''
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)))
    child.on('exit', () => {
      if (this.forwarders.get(key)?.child === child) this.forwarders.delete(key)
      rmSync(socket, {force: true})
      // The last forwarder gone (the agents stopped, the broker stops): its directory goes too.
      if (this.forwarders.size === 0 && this.dir) {
        rmSync(this.dir, {recursive: true, force: true})
        this.dir = null
      }
    })
    this.forwarders.set(key, {child, socket, netns: s.netns!})
    const deadline = Date.now() + 10_000
    while (!isSocket(socket)) {
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
        child.kill('SIGTERM')
        throw new Error(`forwarding to the agent's port ${port} failed: ${stderr.trim() || 'its forwarder did not start'}`)
      }
      await new Promise((r) => setTimeout(r, 10))
    }
    return socket
  }
}

const isSocket = (p: string) => existsSync(p) && statSync(p).isSocket()

function dial(to: net.NetConnectOpts): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    // A request's bytes go at once (a preview's small request waited on Nagle's algorithm).
    const c = net.connect({...to, noDelay: true})
    c.once('connect', () => {
      c.removeListener('error', reject)
      resolve(c)
    })
    c.once('error', reject)
  })
}
