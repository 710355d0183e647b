/**
 * One POST of JSON to the Hub as an agent (its bearer token), over node:http: what an agent's
 * hook and its broker send (status reports, token refreshes). No client library, because the
 * hook that loads this runs on every tool call. Also where an agent's token is read from.
 */
import {readFileSync} from 'node:fs'
import {request} from 'node:http'
import {request as httpsRequest} from 'node:https'

/**
 * An agent's token: the file its broker keeps fresh (`SVC_AUTH_TOKEN_FILE`, refreshed before the
 * token expires, so a long-running agent's hooks keep working), else `SVC_AUTH_TOKEN`.
 */
export function agentToken(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.SVC_AUTH_TOKEN_FILE) {
    try {
      const t = readFileSync(env.SVC_AUTH_TOKEN_FILE, 'utf8').trim()
      if (t) return t
    } catch {
      // not written yet or removed: the environment's token is the one the agent started with
    }
  }
  return env.SVC_AUTH_TOKEN?.trim() || null
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
