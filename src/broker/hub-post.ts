/**
 * One POST of JSON to the Hub as an agent (its bearer token), over node:http: what an agent's
 * hook and its broker send (status reports, token refreshes). No client library, because the
 * hook that loads this runs on every tool call. Also where an agent's token is read from.
 */
import {closeSync, constants, fstatSync, openSync, readSync} from 'node:fs'
import {request} from 'node:http'
import {request as httpsRequest} from 'node:https'

/**
 * A small regular file the agent can write (its HOME), read by the broker on the host too: never
 * through a link (one to /dev/zero or another agent's file), never a FIFO (it would block the
 * broker's thread) or device, at most `max` bytes; null otherwise.
 */
export function readSmallFile(path: string, max: number): string | null {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch {
    return null
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile() || st.size > max) return null
    const buf = Buffer.alloc(st.size)
    let n = 0
    while (n < buf.length) {
      const r = readSync(fd, buf, n, buf.length - n, n)
      if (r <= 0) break
      n += r
    }
    return buf.subarray(0, n).toString('utf8')
  } catch {
    return null
  } finally {
    closeSync(fd)
  }
}

/**
 * An agent's token: the file its broker keeps fresh (`SVC_AUTH_TOKEN_FILE`, refreshed before the
 * token expires, so a long-running agent's hooks keep working), else `SVC_AUTH_TOKEN`.
 */
export function agentToken(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.SVC_AUTH_TOKEN_FILE) {
    try {
      const t = readSmallFile(env.SVC_AUTH_TOKEN_FILE, 64 * 1024)?.trim()
      if (t) return t
    } catch {
      // not written yet or removed: the environment's token is the one the agent started with
    }
  }
  return env.SVC_AUTH_TOKEN?.trim() || null
}

/**
 * The Hub URLs an agent reports to, in order: `SVC_HUB_ENDPOINT` (the replica its broker was
 * connected to when it started), then the rest of `SVC_HUB_ENDPOINTS` (every URL of the
 * deployment its broker was given). A report that cannot reach one tries the next, so an
 * agent's reports survive the replica it started under.
 */
export function hubEndpoints(env: NodeJS.ProcessEnv = process.env): string[] {
  const all = [env.SVC_HUB_ENDPOINT, ...(env.SVC_HUB_ENDPOINTS ?? '').split(',')].map((u) => u?.trim()).filter((u): u is string => !!u)
  return [...new Set(all)]
}

/** The endpoint variables of an agent or a report: the replica to try first and, with several, the whole list. */
export function hubEndpointEnv(current: string, all: string[]): Record<string, string> {
  return all.length > 1 ? {SVC_HUB_ENDPOINT: current, SVC_HUB_ENDPOINTS: all.join(',')} : {SVC_HUB_ENDPOINT: current}
}

/**
 * What a broker of several replicas adds to its agents' environment: the list (`SVC_HUB_ENDPOINTS`),
 * and each URL in a variable of its own, because the destinations an isolated agent may reach
 * are read from `*_ENDPOINT` variables (sandbox/egress-plan.ts): every replica is one.
 */
export function replicaEnv(all: string[]): Record<string, string> {
  if (all.length < 2) return {}
  return {SVC_HUB_ENDPOINTS: all.join(','), ...Object.fromEntries(all.map((u, i) => [`SVC_HUB_REPLICA${i}_ENDPOINT`, u]))}
}

/** Resolves the answer's status and body; rejects with the request's error (its `code` kept) or a timeout. */
export function hubPost(url: URL, token: string, body: string, timeoutMs: number): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : request
    const req = send(url, {method: 'POST', headers: {'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${token}`}, timeout: timeoutMs}, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8')}))
    })
    req.on('timeout', () => req.destroy(new Error('timed out')))
    req.on('error', reject)
    req.end(body)
  })
}
