/**
 * The hook's side of an approval: ask the Hub (`POST /agents/:id/approvals`, the agent's own
 * token), then long-poll `GET /approvals/:id?wait=` until it is decided or the hook's deadline
 * passes. Plain node:http, like every hook request (it runs on the path of a tool call). Any
 * failure (no Hub, an old Hub) answers null: the harness's own prompt is then the way.
 */
import {request} from 'node:http'
import {request as httpsRequest} from 'node:https'
import type {ApprovalDto} from '../api/approval.js'
import {agentToken, hubPost} from './hub-post.js'
import {askTimeoutMs, type PermissionAsk} from './harnesses/permission-hook.js'

const POLL_S = 25

function hubGet(url: URL, token: string, timeoutMs: number): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : request
    const req = send(url, {method: 'GET', headers: {authorization: `Bearer ${token}`}, timeout: timeoutMs}, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8')}))
    })
    req.on('timeout', () => req.destroy(new Error('timed out')))
    req.on('error', reject)
    req.end()
  })
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/**
 * Asks and waits; resolves the approval as it ended (allowed, denied, answered, expired), or as
 * it stands at the deadline, or null when the Hub could not be asked. `onPending` is called once
 * the Hub holds the request pending, before the wait.
 */
export async function askApproval(env: NodeJS.ProcessEnv, ask: PermissionAsk, waitSeconds: number, log: (msg: string) => void = () => {}, onPending?: (approval: ApprovalDto) => void): Promise<ApprovalDto | null> {
  const endpoint = env.SVC_HUB_ENDPOINT
  const agentId = env.SVC_AGENT_ID
  const token = agentToken(env)
  if (!endpoint || !agentId || !token) return null
  const deadline = Date.now() + waitSeconds * 1000
  let approval: ApprovalDto
  try {
    const url = new URL(`/api/v1/agents/${encodeURIComponent(agentId)}/approvals`, endpoint)
    const res = await hubPost(url, token, JSON.stringify({tool: ask.tool, summary: ask.summary, input: ask.input ?? null, waitSeconds}), askTimeoutMs(waitSeconds))
    if (res.status !== 201) {
      log(`the Hub answered ${res.status} to a permission request`)
      return null
    }
    approval = (JSON.parse(res.body) as {approval: ApprovalDto}).approval
  } catch (err) {
    log(`permission request failed: ${(err as Error).message}`)
    return null
  }
  if (approval.state === 'pending') onPending?.(approval)
  while (approval.state === 'pending' && Date.now() < deadline) {
    const wait = Math.max(0, Math.min(POLL_S, Math.ceil((deadline - Date.now()) / 1000)))
    try {
      const res = await hubGet(new URL(`/api/v1/approvals/${encodeURIComponent(approval.id)}?wait=${wait}`, endpoint), agentToken(env) ?? token, (wait + 10) * 1000)
      if (res.status === 200) approval = (JSON.parse(res.body) as {approval: ApprovalDto}).approval
      else if (res.status >= 400 && res.status < 500) return approval
      else await sleep(1000)
    } catch {
      // The Hub restarting: ask again shortly, until the deadline.
      await sleep(1000)
    }
  }
  return approval
}
