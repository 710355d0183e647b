import {appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'
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
