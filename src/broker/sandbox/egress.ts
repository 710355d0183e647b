/**
 * The broker's side of an isolated agent's network (egress-plan.ts): one Unix socket per
 * allowed loopback destination, each connection forwarded to that one address and port, and a
 * CONNECT proxy letting through only the plan's host:port pairs. The sockets live in a directory
 * of the broker's, bound read-only into the sandbox (at SANDBOX_NET_DIR: the plan names the
 * sockets by that path, the broker listens on the same file names in its own directory); the
 * plan is kept there too, so a broker that restarts while its agents run opens their sockets
 * again (`resumeEgress`).
 *
 * The servers run in the broker process: a connection the agent opens is a connection the
 * broker makes, to a destination the plan fixed at start. Nothing the agent sends can change it.
 */
import {existsSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync} from 'node:fs'
import net from 'node:net'
import {basename, join} from 'node:path'
import type {EgressPlan} from './egress-plan.js'

/** Open servers by socket directory, for the whole process (several runtime objects share a state dir). */
const open = new Map<string, net.Server[]>()

const PLAN = 'plan.json'
/** The longest Unix socket path Linux takes is 107 bytes. */
export const MAX_SOCKET_PATH = 107

export function egressRunning(dir: string): boolean {
  return open.has(dir)
}

/** Writes the plan and opens its sockets (replacing any left by a broker that stopped). Idempotent in a process. */
export async function openEgress(dir: string, plan: EgressPlan): Promise<void> {
  // A start again of the same session (a restart) gets the new plan, not the old sockets.
  await stopServing(dir)
  mkdirSync(dir, {recursive: true, mode: 0o700})
  writeFileSync(join(dir, PLAN), JSON.stringify(plan), {mode: 0o600})
  await serve(dir, plan)
}

/** Opens the sockets of a plan written at an agent's start, when this process does not serve them yet. */
export async function resumeEgress(dir: string): Promise<void> {
  if (open.has(dir) || !existsSync(join(dir, PLAN))) return
  await serve(dir, JSON.parse(readFileSync(join(dir, PLAN), 'utf8')) as EgressPlan)
}

/** Closes the sockets and removes the directory. */
export async function closeEgress(dir: string): Promise<void> {
  await stopServing(dir)
  rmSync(dir, {recursive: true, force: true})
}

/** Tests: stop serving a directory but keep its files, as a broker process that ended would. */
export const forgetForTest = (dir: string) => stopServing(dir)

/** Stops accepting and ends the connections forwarded (the agent is stopped or started anew). */
async function stopServing(dir: string): Promise<void> {
  const servers = open.get(dir) ?? []
  open.delete(dir)
  for (const s of servers) {
    s.close()
    for (const c of connections.get(s) ?? []) c.destroy()
    connections.delete(s)
  }
}

/** The accepted connections of each server, ended with it (close() alone would wait for them). */
const connections = new WeakMap<net.Server, Set<net.Socket>>()

async function serve(dir: string, plan: EgressPlan): Promise<void> {
  if (open.has(dir)) return
  const servers: net.Server[] = []
  open.set(dir, servers)
  try {
    for (const l of plan.loopback) servers.push(await listen(join(dir, basename(l.socket)), (c) => forward(c, l.address, l.port)))
    if (plan.proxy) {
      const allow = new Set(plan.proxy.allow)
      servers.push(await listen(join(dir, basename(plan.proxy.socket)), (c) => proxy(c, allow)))
    }
  } catch (err) {
    await closeEgress(dir)
    throw err
  }
}

function listen(socket: string, onConnection: (c: net.Socket) => void): Promise<net.Server> {
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) throw new Error(`the sandbox socket path ${socket} is longer than ${MAX_SOCKET_PATH} bytes`)
  try {
    unlinkSync(socket)
  } catch {
    // None left behind.
  }
  const live = new Set<net.Socket>()
  const server = net.createServer((c) => {
    live.add(c)
    c.unref()
    c.once('close', () => live.delete(c))
    onConnection(c)
  })
  connections.set(server, live)
  // The broker's own exit is never held up by an agent's network (its agents run on; a broker
  // started again serves them, resumeEgress).
  server.unref()
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(socket, () => {
      server.off('error', reject)
      // A later error (EMFILE on accept) must not crash the broker.
      server.on('error', () => {})
      resolve(server)
    })
  })
}

function pipe(a: net.Socket, b: net.Socket, head?: Buffer) {
  a.unref()
  b.unref()
  const end = () => {
    a.destroy()
    b.destroy()
  }
  a.on('error', end)
  b.on('error', end)
  a.on('close', end)
  b.on('close', end)
  if (head?.length) b.write(head)
  a.pipe(b)
  b.pipe(a)
}

function forward(client: net.Socket, host: string, port: number) {
  const upstream = net.connect({host, port})
  pipe(client, upstream)
}

/** Request heads larger than this are refused (a CONNECT line and a few headers fit easily). */
const MAX_HEAD = 16 * 1024

/**
 * A minimal HTTP proxy: `CONNECT host:port` (https) is tunnelled, an absolute-form request
 * (`GET http://host/path`) is forwarded as is (HTTP/1.1 servers take that form), each only to
 * an allowed host:port. Anything else answers 403 naming what to allow.
 */
function proxy(client: net.Socket, allow: Set<string>) {
  let buf = Buffer.alloc(0)
  const onData = (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk])
    const end = buf.indexOf('\r\n\r\n')
    if (end < 0) {
      if (buf.length > MAX_HEAD) refuse(client, 431, 'request head too large')
      return
    }
    client.off('data', onData)
    client.pause()
    const line = buf.subarray(0, buf.indexOf('\r\n')).toString('latin1')
    const target = proxyTarget(line)
    if (!target) return refuse(client, 400, `not a proxy request: ${JSON.stringify(line.slice(0, 100))}`)
    const key = `${target.host}:${target.port}`
    if (!allow.has(key)) return refuse(client, 403, `svc: this agent's egress policy does not allow ${key} (allowed: ${[...allow].join(', ')}; settings runtimes.<name>.egress_allow adds more)`)
    const upstream = net.connect({host: target.host, port: target.port})
    if (target.connect) {
      upstream.once('connect', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
        pipe(client, upstream, buf.subarray(end + 4))
        client.resume()
      })
      upstream.once('error', () => refuse(client, 502, `cannot connect to ${key}`))
    } else {
      pipe(client, upstream, buf)
      client.resume()
    }
  }
  client.on('data', onData)
  client.on('error', () => client.destroy())
}

/** The host and port of a proxy request line, lower-cased; undefined when it is none. */
export function proxyTarget(line: string): {host: string; port: number; connect: boolean} | undefined {
  const m = /^([A-Z]+) (\S+) HTTP\/1\.[01]$/.exec(line)
  if (!m) return undefined
  if (m[1] === 'CONNECT') {
    const hp = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(m[2])
    return hp ? {host: (hp[1] ?? hp[2]).toLowerCase(), port: Number(hp[3]), connect: true} : undefined
  }
  let u: URL
  try {
    u = new URL(m[2])
  } catch {
    return undefined
  }
  if (u.protocol !== 'http:') return undefined
  return {host: u.hostname.replace(/^\[|\]$/g, '').toLowerCase(), port: u.port ? Number(u.port) : 80, connect: false}
}

function refuse(client: net.Socket, status: number, message: string) {
  if (client.destroyed) return
  const body = `${message}\n`
  client.end(`HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Bad Request'}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
}
