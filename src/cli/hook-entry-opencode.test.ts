import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {afterAll, afterEach, beforeAll, describe, expect, it, vi} from 'vitest'
import {runHook} from './hook-entry.js'

/**
 * `svc hook opencode permission.asked` (what OpenCode's svc plugin runs for a permission
 * request) against a real HTTP server on loopback that plays the Hub's approval routes: the
 * lines the plugin reads on its stdout, and the fallback when the Hub cannot be asked.
 */
let hub: http.Server
let env: NodeJS.ProcessEnv
let seen: Array<{method: string; url: string; body: any}>
/** How the Hub answers the request (status) and the long-poll (the approval it ends as). */
let askStatus = 201
let ending: Record<string, unknown> = {}

const approval = (over: Record<string, unknown> = {}) => ({id: 'ap1', agentId: 'a1', agentName: 'fix', projectId: 'p1', tool: 'bash', summary: 'rm -rf build', input: null, state: 'pending', createdAt: '', expiresAt: '', decidedBy: null, decidedAt: null, reason: null, ...over})

beforeAll(async () => {
  hub = http.createServer((req, res) => {
    let text = ''
    req.on('data', (c) => (text += c))
    req.on('end', () => {
      seen.push({method: req.method!, url: req.url!, body: text ? JSON.parse(text) : null})
      const json = (status: number, body: unknown) => res.writeHead(status, {'content-type': 'application/json'}).end(JSON.stringify(body))
      if (req.method === 'POST' && req.url === '/api/v1/agents/a1/approvals') return json(askStatus, askStatus === 201 ? {approval: approval()} : {error: {code: 'internal'}})
      if (req.method === 'GET' && req.url?.startsWith('/api/v1/approvals/ap1')) return json(200, {approval: approval(ending)})
      json(200, {ok: true})
    })
  })
  await new Promise<void>((r) => hub.listen(0, '127.0.0.1', r))
  env = {SVC_HUB_ENDPOINT: `http://127.0.0.1:${(hub.address() as AddressInfo).port}`, SVC_AGENT_ID: 'a1', SVC_AUTH_TOKEN: 'svc_agt_test'}
})
afterAll(() => new Promise((r) => hub.close(r)))
afterEach(() => vi.restoreAllMocks())

/** Runs the hook for one OpenCode permission request; what it printed on stdout. */
async function ask(): Promise<string> {
  seen = []
  let out = ''
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk)
    return true
  })
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
  const payload = {id: 'per_1', sessionID: 's1', permission: 'bash', patterns: ['rm -rf build'], always: ['rm *'], metadata: {command: 'rm -rf build'}}
  await runHook(['opencode', 'permission.asked', JSON.stringify(payload)], env)
  vi.restoreAllMocks()
  return out
}

describe('svc hook opencode permission.asked', () => {
  it('asks the Hub, says pending, then prints the reply OpenCode takes: once, or reject with the reason', async () => {
    askStatus = 201
    ending = {state: 'allowed', decidedBy: {kind: 'user', id: 'u1'}}
    expect(await ask()).toBe('{"pending":true}\n{"reply":"once"}\n')
    expect(seen[0]).toMatchObject({method: 'POST', url: '/api/v1/agents/a1/approvals', body: {tool: 'bash', summary: 'rm -rf build', input: {patterns: ['rm -rf build'], metadata: {command: 'rm -rf build'}}}})
    // The approval itself shows the agent waiting: no status report of its own.
    expect(seen.some((s) => s.url.endsWith('/status'))).toBe(false)

    ending = {state: 'denied', decidedBy: {kind: 'user', id: 'u1'}, reason: 'no'}
    const lines = (await ask()).trim().split('\n').map((l) => JSON.parse(l))
    expect(lines).toEqual([{pending: true}, {reply: 'reject', message: 'Denied by the user (through svc): no'}])
  })

  it('answered in the TUI or expired: pending, then no reply (OpenCode\'s dialog decides)', async () => {
    askStatus = 201
    for (const state of ['answered', 'expired']) {
      ending = {state}
      expect(await ask(), state).toBe('{"pending":true}\n')
    }
  })

  it('a Hub that cannot be asked: no line at all, and the agent is reported waiting as before', async () => {
    askStatus = 500
    expect(await ask()).toBe('')
    expect(seen.find((s) => s.url === '/api/v1/agents/a1/status')?.body).toMatchObject({activity: 'waiting_for_input', detail: 'Permission: bash: rm -rf build'})
  })
})
