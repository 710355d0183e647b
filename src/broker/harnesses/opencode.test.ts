import {mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {prepareHarnessHome} from './prepare-home.js'
import {opencode, toolDetail} from './opencode.js'
import {pluginSource} from './opencode-plugin.js'
import type {LaunchContext} from './types.js'
import {harnessModule} from './registry.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

function ctx(over: Partial<LaunchContext> = {}): LaunchContext {
  const home = mkdtempSync(join(tmpdir(), 'svc-oc-home-'))
  dirs.push(home)
  return {agentId: 'a1', agentName: 'fix', home, workdir: '/nonexistent/workdir', resume: false, env: {ANTHROPIC_API_KEY: 'sk-secret-value'}, authType: 'api-key', hookCommand: ['/usr/bin/node', '/opt/svc/bin/run.js', 'hook', 'opencode'], userHome: '/root', ...over}
}

describe('opencode harness module', () => {
  it('is registered under its type', () => {
    expect(harnessModule('opencode')).toBe(opencode)
  })

  it('builds the interactive command: model, first prompt, resume instead of the prompt', () => {
    expect(opencode.args(ctx({model: 'anthropic/claude-sonnet-4-5', task: 'fix the bug'}))).toEqual(['-m', 'anthropic/claude-sonnet-4-5', '--prompt', 'fix the bug'])
    expect(opencode.args(ctx({task: 'fix the bug', resume: true}))).toEqual(['--continue'])
    expect(opencode.args(ctx())).toEqual([])
    expect(opencode.taskInArgs).toBe(true)
  })

  it('the plugin runs its hooks one after another in the order of the events, a slow one holding back the next', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-oc-plugin-'))
    dirs.push(dir)
    const log = join(dir, 'hooks.log')
    // A hook that takes 400 ms for a busy status (as a slow process start would) and none otherwise.
    const hook = join(dir, 'hook.mjs')
    writeFileSync(
      hook,
      `import {appendFileSync, readFileSync} from 'node:fs'\nconst p = JSON.parse(readFileSync(0, 'utf8'))\nif (p.status?.type === 'busy') await new Promise((r) => setTimeout(r, 400))\nappendFileSync(${JSON.stringify(log)}, process.argv[2] + ':' + (p.status?.type ?? '') + '\\n')\n`,
    )
    const file = join(dir, 'svc-hooks.mjs')
    writeFileSync(file, pluginSource([process.execPath, hook]))
    const {SvcHooks} = await import(file)
    const hooks = await SvcHooks()
    // What OpenCode fires at the end of a short turn, within milliseconds.
    const status = (type: string) => ({event: {type: 'session.status', properties: {sessionID: 's1', status: {type}}}})
    await hooks.event(status('busy'))
    await hooks.event(status('idle'))
    await hooks.event({event: {type: 'session.idle', properties: {sessionID: 's1'}}})
    const lines = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [])
    for (let i = 0; i < 100 && lines().length < 3; i++) await new Promise((r) => setTimeout(r, 50))
    expect(lines()).toEqual(['session.status:busy', 'session.status:idle', 'session.idle:'])
  })

  it('the plugin ends a turn at the first idle after busy, passes the error a session stopped on, and forgets it once the session works again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-oc-plugin-'))
    dirs.push(dir)
    const log = join(dir, 'hooks.log')
    const hook = join(dir, 'hook.mjs')
    writeFileSync(hook, `import {appendFileSync, readFileSync} from 'node:fs'\nconst p = JSON.parse(readFileSync(0, 'utf8'))\nappendFileSync(${JSON.stringify(log)}, process.argv[2] + (p.lastError ? ':' + p.lastError.name : '') + (p.endsTurn === false ? ':repeat' : '') + '\\n')\n`)
    const file = join(dir, 'svc-hooks-errors.mjs')
    writeFileSync(file, pluginSource([process.execPath, hook]))
    const {SvcHooks} = await import(file)
    const hooks = await SvcHooks()
    const busy = {event: {type: 'session.status', properties: {sessionID: 's1', status: {type: 'busy'}}}}
    const error = {event: {type: 'session.error', properties: {sessionID: 's1', error: {name: 'APIError'}}}}
    const idle = {event: {type: 'session.idle', properties: {sessionID: 's1'}}}
    // A turn that fails (OpenCode then says idle twice, as 1.18 does); one where OpenCode recovers
    // after the error (busy again); a clean one.
    for (const e of [busy, error, idle, idle, busy, error, busy, idle, busy, idle]) await hooks.event(e)
    const lines = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter((l) => !l.startsWith('session.status')) : [])
    for (let i = 0; i < 100 && lines().length < 7; i++) await new Promise((r) => setTimeout(r, 50))
    expect(lines()).toEqual(['session.error', 'session.idle:APIError', 'session.idle:APIError:repeat', 'session.error', 'session.idle', 'session.idle'])
  })

  it('turns off update checks, the models catalogue fetch and LSP downloads', () => {
    expect(opencode.env!(ctx())).toMatchObject({OPENCODE_DISABLE_AUTOUPDATE: 'true', OPENCODE_DISABLE_MODELS_FETCH: 'true', OPENCODE_DISABLE_LSP_DOWNLOAD: 'true'})
  })

  it('prepare writes config, plugin and the no-install marker into HOME only, without secrets, idempotently', async () => {
    const c = ctx({thinkingLevel: 'high'})
    const dir = join(c.home, '.config', 'opencode')
    mkdirSync(dir, {recursive: true})
    writeFileSync(join(dir, 'opencode.json'), JSON.stringify({theme: 'dark', agent: {plan: {model: 'x/y'}}}))
    await opencode.prepare(c)
    await opencode.prepare(c)
    const config = JSON.parse(readFileSync(join(dir, 'opencode.json'), 'utf8'))
    expect(config).toMatchObject({theme: 'dark', autoupdate: false, share: 'disabled', agent: {plan: {model: 'x/y'}, build: {reasoningEffort: 'high'}}})
    const plugin = readFileSync(join(dir, 'plugin', 'svc-hooks.js'), 'utf8')
    expect(plugin).toContain(JSON.stringify(c.hookCommand))
    expect(existsSync(join(dir, 'node_modules'))).toBe(true)
    const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8'))
    expect(lock.packages[''].dependencies).toHaveProperty('@opencode-ai/plugin')
    for (const f of ['opencode.json', 'package.json', 'package-lock.json', 'plugin/svc-hooks.js']) expect(readFileSync(join(dir, f), 'utf8')).not.toContain('sk-secret-value')

    await opencode.prepare({...c, thinkingLevel: 'off'})
    expect(JSON.parse(readFileSync(join(dir, 'opencode.json'), 'utf8')).agent).toEqual({plan: {model: 'x/y'}})
  })

  it('credentials-file copies the user\'s opencode auth.json into the agent\'s data dir', async () => {
    const user = mkdtempSync(join(tmpdir(), 'svc-oc-user-'))
    dirs.push(user)
    const c = ctx({authType: 'credentials-file', userHome: user})
    await expect(prepareHarnessHome(opencode, c)).rejects.toThrow(/opencode auth login/)
    mkdirSync(join(user, '.local', 'share', 'opencode'), {recursive: true})
    writeFileSync(join(user, '.local', 'share', 'opencode', 'auth.json'), '{"anthropic":{"type":"oauth"}}')
    await prepareHarnessHome(opencode, c)
    expect(readFileSync(join(c.home, '.local', 'share', 'opencode', 'auth.json'), 'utf8')).toBe('{"anthropic":{"type":"oauth"}}')
  })

  it('maps events to activities', () => {
    expect(opencode.onHook('session.status', {sessionID: 's', status: {type: 'busy'}})).toEqual({activity: 'thinking'})
    expect(opencode.onHook('session.status', {sessionID: 's', status: {type: 'idle'}})).toBeNull()
    expect(opencode.onHook('tool.execute.before', {tool: 'bash', args: {command: 'npm  test', description: 'run tests'}})).toEqual({activity: 'executing', detail: 'bash: npm test'})
    expect(opencode.onHook('tool.execute.after', {tool: 'bash'})).toEqual({activity: 'thinking'})
    // Payloads as OpenCode 1.18.33 sent them with permission.bash = ask.
    expect(opencode.onHook('permission.asked', {id: 'per_1', sessionID: 's', permission: 'bash', patterns: ['echo hi > made.txt', 'sleep 2'], metadata: {command: 'echo hi > made.txt && sleep 2'}})).toEqual({activity: 'waiting_for_input', detail: 'bash: echo hi > made.txt && sleep 2'})
    expect(opencode.onHook('permission.asked', {permission: 'external_directory', patterns: ['/etc/*']})).toEqual({activity: 'waiting_for_input', detail: 'external_directory: /etc/*'})
    const lastTool = {tool: 'bash', args: {command: 'echo hi > made.txt && sleep 2'}}
    expect(opencode.onHook('permission.replied', {sessionID: 's', requestID: 'per_1', reply: 'once', lastTool})).toEqual({activity: 'executing', detail: 'bash: echo hi > made.txt && sleep 2'})
    expect(opencode.onHook('permission.replied', {sessionID: 's', requestID: 'per_1', reply: 'reject', lastTool})).toEqual({activity: 'thinking'})
    expect(opencode.onHook('permission.replied', {})).toEqual({activity: 'thinking'})
    expect(opencode.onHook('session.idle', {sessionID: 's'})).toEqual({activity: 'idle', turnEnded: true})
    // A failed turn: the error shows at once, and the idle after it ends the turn, keeping it.
    const error = {sessionID: 's', error: {name: 'APIError', data: {message: 'invalid request'}}}
    // ... and is the agent's error (shown red, the harness_error webhook) until it works again.
    expect(opencode.onHook('session.error', error)).toEqual({activity: 'idle', detail: 'error: invalid request', error: 'invalid request'})
    expect(opencode.onHook('session.idle', {sessionID: 's', lastError: error.error, endsTurn: true})).toEqual({activity: 'idle', turnEnded: true, detail: 'error: invalid request', error: 'invalid request'})
    // OpenCode repeats session.idle after an error: the repeat counts no turn.
    expect(opencode.onHook('session.idle', {sessionID: 's', lastError: error.error, endsTurn: false})).toEqual({activity: 'idle', detail: 'error: invalid request', error: 'invalid request'})
    // A retry OpenCode waits out is shown as such (still thinking, no error yet).
    expect(opencode.onHook('session.status', {sessionID: 's', status: {type: 'retry', attempt: 7, message: 'Cannot connect to API: connect ECONNREFUSED 127.0.0.1:9', next: 1795755524819}})).toEqual({
      activity: 'thinking',
      detail: 'retrying: Cannot connect to API: connect ECONNREFUSED 127.0.0.1:9, attempt 7',
    })
    expect(opencode.onHook('message.part.updated', {})).toBeNull()
    expect(opencode.onHook('session.status', null)).toBeNull()
  })

  it('carries the session usage totals on idle, leaving a zero cost for the Hub to price', () => {
    const usage = {sessionId: 's', inputTokens: 200, outputTokens: 20, cacheReadTokens: 5, cacheWriteTokens: 0, modelCalls: 2, costUsd: 0, model: 'm1'}
    expect(opencode.onHook('session.idle', {sessionID: 's', usage})).toEqual({activity: 'idle', turnEnded: true, usage: {sessionId: 's', inputTokens: 200, outputTokens: 20, cacheReadTokens: 5, cacheWriteTokens: 0, modelCalls: 2, model: 'm1'}})
    expect(opencode.onHook('session.idle', {sessionID: 's', usage: {...usage, costUsd: 0.25}})?.usage?.costUsd).toBe(0.25)
  })

  it('clips long tool details', () => {
    const d = toolDetail('bash', {command: 'x'.repeat(500)})
    expect(d.length).toBe(200)
    expect(d.startsWith('bash: xxx')).toBe(true)
    expect(toolDetail('todowrite', {})).toBe('todowrite')
  })
})
