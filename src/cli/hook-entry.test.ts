import {appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import http from 'node:http'
import net, {type AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, beforeEach, describe, expect, it, vi} from 'vitest'
import {runHook} from './hook-entry.js'

// The hook entry in this process against a real HTTP server on loopback that records each report.
let dir: string
let hub: http.Server
let reports: Array<{at: number; url: string; body: any}>
let env: NodeJS.ProcessEnv

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-hook-entry-'))
  hub = http.createServer((req, res) => {
    let text = ''
    req.on('data', (c) => (text += c))
    req.on('end', () => {
      reports.push({at: Date.now(), url: req.url!, body: JSON.parse(text)})
      res.writeHead(200, {'content-type': 'application/json'}).end('{"ok":true}')
    })
  })
  await new Promise<void>((r) => hub.listen(0, '127.0.0.1', r))
  env = {SVC_HUB_ENDPOINT: `http://127.0.0.1:${(hub.address() as AddressInfo).port}`, SVC_AGENT_ID: 'a1', SVC_AUTH_TOKEN: 'svc_agt_test'}
})

afterAll(async () => {
  await new Promise((r) => hub.close(r))
  rmSync(dir, {recursive: true, force: true})
})

beforeEach(() => {
  reports = []
})

const line = (type: string, message: object) => JSON.stringify({type, sessionId: 's1', message}) + '\n'
const prompt = line('user', {role: 'user', content: 'go'})
const answer = line('assistant', {id: 'm1', role: 'assistant', stop_reason: 'end_turn', content: [{type: 'text', text: 'Done.'}], usage: {input_tokens: 100, output_tokens: 20}})
const stop = (path: string) => JSON.stringify({session_id: 's1', transcript_path: path, last_assistant_message: 'Done.'})

describe('svc hook: what every harness reports', () => {
  it('thinking and idle clear the last tool\'s detail whichever harness reports them', async () => {
    await runHook(['gemini', 'BeforeAgent', JSON.stringify({prompt: 'go'})], env)
    await runHook(['opencode', 'session.status', JSON.stringify({status: {type: 'busy'}})], env)
    expect(reports.map((r) => r.body)).toEqual([
      {activity: 'thinking', detail: '', heartbeat: true},
      {activity: 'thinking', detail: '', heartbeat: true},
    ])
  })
})

describe('svc hook: the turn end and its usage', () => {
  it('a transcript already written: one report with idle, the turn end and the usage', async () => {
    const path = join(dir, 'written.jsonl')
    writeFileSync(path, prompt + answer)
    await runHook(['claude', 'Stop', stop(path)], env)
    expect(reports.map((r) => r.body)).toEqual([{activity: 'idle', detail: '', turnEnded: true, heartbeat: true, usage: {sessionId: 's1', inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0, modelCalls: 1}}])
  })

  it('a transcript Claude Code has not flushed yet: idle goes at once, the usage follows when the answer is written', async () => {
    const path = join(dir, 'late.jsonl')
    writeFileSync(path, prompt)
    const flushedAt = Date.now() + 600
    setTimeout(() => appendFileSync(path, answer), 600)
    await runHook(['claude', 'Stop', stop(path)], env)
    expect(reports.map((r) => r.body)).toEqual([
      {activity: 'idle', detail: '', turnEnded: true, heartbeat: true},
      {heartbeat: true, usage: {sessionId: 's1', inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0, modelCalls: 1}},
    ])
    expect(reports[0]!.at).toBeLessThan(flushedAt)
    expect(reports[1]!.at).toBeGreaterThanOrEqual(flushedAt)
    expect(reports.every((r) => r.url === '/api/v1/agents/a1/status')).toBe(true)
  })

  it('SVC_HOOK_TRACE gets one line per report', async () => {
    const path = join(dir, 'traced.jsonl')
    writeFileSync(path, prompt + answer)
    const trace = join(dir, 'trace.jsonl')
    await runHook(['claude', 'PreToolUse', JSON.stringify({tool_name: 'Bash', tool_input: {command: 'ls'}})], {...env, SVC_HOOK_TRACE: trace})
    const [t, ...rest] = readFileSync(trace, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(rest).toEqual([])
    expect(t).toEqual({agentId: 'a1', harness: 'claude', event: 'PreToolUse', activity: 'executing', status: 200, startedAt: expect.any(Number), sentAt: expect.any(Number), answeredAt: expect.any(Number)})
    expect(t.sentAt).toBeLessThanOrEqual(t.answeredAt)
  })
})

// "A hook never blocks or fails the harness": against a Hub that hangs, is gone or refuses, runHook
// still resolves (bounded by its POST timeout), exits 0 and says what went wrong on stderr.
describe('svc hook: a bad Hub never blocks or fails the harness', () => {
  const preToolUse = JSON.stringify({tool_name: 'Bash', tool_input: {command: 'ls'}})

  /** Runs the hook with stderr captured; process.exitCode is set to a non-zero value first so a 0 afterwards is the hook's. */
  async function runCaptured(endpoint: string): Promise<{stderr: string; exitCode: typeof process.exitCode; ms: number}> {
    const lines: string[] = []
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk))
      return true
    })
    const saved = process.exitCode
    process.exitCode = 7
    const started = Date.now()
    try {
      await runHook(['claude', 'PreToolUse', preToolUse], {...env, SVC_HUB_ENDPOINT: endpoint})
      return {stderr: lines.join(''), exitCode: process.exitCode, ms: Date.now() - started}
    } finally {
      spy.mockRestore()
      process.exitCode = saved
    }
  }

  it('a Hub that accepts the connection and never answers: the hook gives up after its timeout, exit 0', async () => {
    // A raw TCP server: the connection is accepted (so it is not a refusal) and nothing is ever written back.
    const sockets = new Set<net.Socket>()
    let connected = 0
    const silent = net.createServer((s) => {
      connected++
      sockets.add(s)
      s.on('error', () => {})
    })
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r))
    try {
      const out = await runCaptured(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`)
      expect(connected).toBe(1)
      expect(out.exitCode).toBe(0)
      expect(out.stderr).toMatch(/svc hook: status report to \S+ failed: timed out/)
      // Not a performance bound: proves the POST is bounded at all (without the hook's timeout
      // handler it waits for ever and hits the test timeout). Node's default agent's 5 s socket
      // timeout would end it too, so this does not pin POST_TIMEOUT_MS itself.
      expect(out.ms).toBeLessThan(10_000)
    } finally {
      for (const s of sockets) s.destroy()
      await new Promise((r) => silent.close(r))
    }
  }, 20_000)

  it('nothing listens on the Hub port: the hook resolves, exit 0, the failure on stderr', async () => {
    // A port that was just free: bind an ephemeral one, then close it.
    const probe = net.createServer()
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r))
    const port = (probe.address() as AddressInfo).port
    await new Promise((r) => probe.close(r))
    const out = await runCaptured(`http://127.0.0.1:${port}`)
    expect(out.exitCode).toBe(0)
    expect(out.stderr).toMatch(/svc hook: status report to \S+ failed: .*ECONNREFUSED/)
    expect(out.ms).toBeLessThan(10_000)
  }, 20_000)

  it('a Hub that answers 401: a line on stderr naming the status, exit 0', async () => {
    let received: any
    const refusing = http.createServer((req, res) => {
      let text = ''
      req.on('data', (c) => (text += c))
      req.on('end', () => {
        received = JSON.parse(text)
        res.writeHead(401, {'content-type': 'application/json'}).end('{"error":{"code":"unauthenticated"}}')
      })
    })
    await new Promise<void>((r) => refusing.listen(0, '127.0.0.1', r))
    try {
      const out = await runCaptured(`http://127.0.0.1:${(refusing.address() as AddressInfo).port}`)
      expect(received).toMatchObject({activity: 'executing', detail: 'Bash: ls'})
      expect(out.exitCode).toBe(0)
      expect(out.stderr).toMatch(/svc hook: the Hub answered 401 to a status report/)
    } finally {
      await new Promise((r) => refusing.close(r))
    }
  })
})
