import {mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {prepareHarnessHome} from './prepare-home.js'
import {opencode, permissionAskOf, toolDetail} from './opencode.js'
import {pluginSource} from './opencode-plugin.js'
import type {LaunchContext} from './types.js'
import {harnessModule} from './registry.js'
import {waitFor} from '../../../test/helpers/live-hub.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

function ctx(over: Partial<LaunchContext> = {}): LaunchContext {
  const home = mkdtempSync(join(tmpdir(), 'svc-oc-home-'))
  dirs.push(home)
  return {agentId: 'a1', agentName: 'fix', home, workdir: '/nonexistent/workdir', resume: false, env: {ANTHROPIC_API_KEY: 'sk-secret-value'}, authType: 'api-key', hookCommand: ['/usr/bin/node', '/opt/svc/bin/run.js', 'hook', 'opencode'], userHome: '/root', ...over}
}

/**
 * The svc plugin (pluginSource) in a temp dir whose hooks run `node hook.mjs <event>`, the hook's
 * source made by `source(log, dir)`; loaded: the dir, the hooks' log path and its `SvcHooks`.
 */
async function pluginWithHook(name: string, source: (log: string, dir: string) => string): Promise<{dir: string; log: string; SvcHooks: (input?: unknown) => Promise<any>}> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-oc-plugin-'))
  dirs.push(dir)
  const log = join(dir, 'hooks.log')
  const hook = join(dir, 'hook.mjs')
  writeFileSync(hook, source(log, dir))
  const file = join(dir, `${name}.mjs`)
  writeFileSync(file, pluginSource([process.execPath, hook]))
  const {SvcHooks} = await import(file)
  return {dir, log, SvcHooks}
}

describe('opencode harness module', {timeout: 240_000}, () => {
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
    // A hook that takes 400 ms for a busy status (as a slow process start would) and none otherwise.
    const {log, SvcHooks} = await pluginWithHook('svc-hooks', (log) => `import {appendFileSync, readFileSync} from 'node:fs'\nconst p = JSON.parse(readFileSync(0, 'utf8'))\nif (p.status?.type === 'busy') await new Promise((r) => setTimeout(r, 400))\nappendFileSync(${JSON.stringify(log)}, process.argv[2] + ':' + (p.status?.type ?? '') + '\\n')\n`)
    const hooks = await SvcHooks()
    // What OpenCode fires at the end of a short turn, within milliseconds.
    const status = (type: string) => ({event: {type: 'session.status', properties: {sessionID: 's1', status: {type}}}})
    await hooks.event(status('busy'))
    await hooks.event(status('idle'))
    await hooks.event({event: {type: 'session.idle', properties: {sessionID: 's1'}}})
    const lines = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [])
    await waitFor(() => lines().length >= 3, 90_000, 'three hooks').catch(() => {})
    expect(lines()).toEqual(['session.status:busy', 'session.status:idle', 'session.idle:'])
  })

  it('the plugin ends a turn at the first idle after busy, passes the error a session stopped on, and forgets it once the session works again', async () => {
    const {log, SvcHooks} = await pluginWithHook('svc-hooks-errors', (log) => `import {appendFileSync, readFileSync} from 'node:fs'\nconst p = JSON.parse(readFileSync(0, 'utf8'))\nappendFileSync(${JSON.stringify(log)}, process.argv[2] + (p.lastError ? ':' + p.lastError.name : '') + (p.endsTurn === false ? ':repeat' : '') + '\\n')\n`)
    const hooks = await SvcHooks()
    const busy = {event: {type: 'session.status', properties: {sessionID: 's1', status: {type: 'busy'}}}}
    const error = {event: {type: 'session.error', properties: {sessionID: 's1', error: {name: 'APIError'}}}}
    const idle = {event: {type: 'session.idle', properties: {sessionID: 's1'}}}
    // A turn that fails (OpenCode then says idle twice, as 1.18 does); one where OpenCode recovers
    // after the error (busy again); a clean one.
    for (const e of [busy, error, idle, idle, busy, error, busy, idle, busy, idle]) await hooks.event(e)
    const lines = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter((l) => !l.startsWith('session.status')) : [])
    await waitFor(() => lines().length >= 6, 90_000, 'six hooks').catch(() => {})
    expect(lines()).toEqual(['session.error', 'session.idle:APIError', 'session.idle:APIError:repeat', 'session.error', 'session.idle', 'session.idle'])
  })

  it('the plugin asks a permission outside the queue: after the hooks before it, holding those after it until the Hub holds the request, then replies through the SDK client', async () => {
    // The approval hook says pending at once, then waits for the test's decision (a file); the
    // others log their event. A hook before the request is slow: the request must wait for it.
    const {dir, log, SvcHooks} = await pluginWithHook('svc-hooks-ask', (log, dir) => {
      const go = join(dir, 'decided')
      return [
        `import {appendFileSync, existsSync, readFileSync} from 'node:fs'`,
        `const event = process.argv[2]`,
        `const p = JSON.parse(readFileSync(0, 'utf8'))`,
        `if (event === 'tool.execute.before') await new Promise((r) => setTimeout(r, 300))`,
        `appendFileSync(${JSON.stringify(log)}, (p.error ? event + ' ' + p.reply + ': ' + p.error : event) + '\\n')`,
        `if (event === 'permission.asked') {`,
        `  process.stdout.write('{"pending":true}\\n')`,
        `  while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 20))`,
        `  process.stdout.write(readFileSync(${JSON.stringify(go)}, 'utf8'))`,
        `  appendFileSync(${JSON.stringify(log)}, 'decided ' + p.id + '\\n')`,
        `}`,
      ].join('\n')
    })
    const go = join(dir, 'decided')
    const lines = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [])
    const until = (n: number) => waitFor(() => lines().length >= n, 90_000, `${n} hook lines (${lines().join(', ')})`)
    // OpenCode 1.18's plugin client (SDK v1): a deny's reason by the v2 route through its HTTP
    // client (the v1 client has no method for it), an allow by its own (deprecated route) method.
    const posted: any[] = []
    const responded: any[] = []
    const ok = {data: true, response: {status: 200}}
    const v1 = await SvcHooks({client: {_client: {post: async (o: any) => (posted.push(o), ok)}, postSessionIdPermissionsPermissionId: async (o: any) => (responded.push(o), ok)}})
    await v1['tool.execute.before']({tool: 'bash', sessionID: 's1', callID: 'c1'}, {args: {command: 'rm -rf build'}})
    await v1.event({event: {type: 'permission.asked', properties: {id: 'per_1', sessionID: 's1', permission: 'bash', patterns: ['rm -rf build'], metadata: {command: 'rm -rf build'}}}})
    await v1.event({event: {type: 'session.status', properties: {sessionID: 's1', status: {type: 'busy'}}}})
    await until(3)
    // The later hook ran while the request still waits for its decision.
    expect(lines()).toEqual(['tool.execute.before', 'permission.asked', 'session.status'])
    expect(posted).toEqual([])
    writeFileSync(go, '{"reply":"reject","message":"Denied by the user (through svc): no"}\n')
    await waitFor(() => posted.length > 0, 90_000, 'the reply')
    expect(lines()[3]).toBe('decided per_1')
    expect(posted).toEqual([{url: '/permission/{requestID}/reply', path: {requestID: 'per_1'}, body: {reply: 'reject', message: 'Denied by the user (through svc): no'}, headers: {'Content-Type': 'application/json'}}])
    writeFileSync(go, '{"reply":"once"}\n')
    await v1.event({event: {type: 'permission.asked', properties: {id: 'per_0', sessionID: 's1', permission: 'bash'}}})
    await waitFor(() => responded.length > 0, 90_000, 'the allow')
    expect(responded).toEqual([{path: {id: 's1', permissionID: 'per_0'}, body: {response: 'once'}}])
    expect(posted).toHaveLength(1)
    await until(6)

    // A client with the v2 SDK's method. A hook that prints no reply (answered in the TUI,
    // expired) replies nothing: the request after it is the only one replied to.
    const replied: any[] = []
    const v2 = await SvcHooks({client: {permission: {reply: async (o: any) => replied.push(o)}}})
    writeFileSync(go, '')
    await v2.event({event: {type: 'permission.asked', properties: {id: 'per_2', sessionID: 's2', permission: 'bash'}}})
    await until(8)
    expect(lines().slice(6)).toEqual(['permission.asked', 'decided per_2'])
    writeFileSync(go, '{"reply":"once"}\n')
    await v2.event({event: {type: 'permission.asked', properties: {id: 'per_3', sessionID: 's2', permission: 'bash'}}})
    await waitFor(() => replied.length > 0, 90_000, 'the reply')
    expect(replied).toEqual([{requestID: 'per_3', reply: 'once'}])
  })

  it('a reply OpenCode does not take is reported as the agent\'s error, through the queue; one it no longer holds (answered in the TUI) is not', async () => {
    // The approval hook answers at once with the reply in the request's `metadata.reply`.
    const {log, SvcHooks} = await pluginWithHook('svc-hooks-fail', (log) =>
      [
        `import {appendFileSync, readFileSync} from 'node:fs'`,
        `const event = process.argv[2]`,
        `const p = JSON.parse(readFileSync(0, 'utf8'))`,
        `if (event === 'permission.asked') process.stdout.write('{"pending":true}\\n' + JSON.stringify(p.metadata.reply) + '\\n')`,
        `appendFileSync(${JSON.stringify(log)}, JSON.stringify([event, p.id, p.reply ?? null, p.error ?? null, p.metadata?.command ?? null]) + '\\n')`,
      ].join('\n'),
    )
    const lines = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l)) : [])
    const asked = (hooks: any, id: string, reply: object) => hooks.event({event: {type: 'permission.asked', properties: {id, sessionID: 's1', permission: 'bash', patterns: ['make deploy'], metadata: {command: 'make deploy', reply}}}})
    // As the SDK answers: {error, response} for a refusal (it does not throw), or a throw (no server).
    const called: string[] = []
    const client = {
      permission: {
        reply: async (o: any) => {
          called.push(o.requestID)
          if (o.requestID === 'gone') return {error: {name: 'NotFoundError', data: {message: 'Permission request not found: gone'}}, response: {status: 404}}
          if (o.requestID === 'refused') return {error: {name: 'UnknownError', data: {message: 'database is locked'}}, response: {status: 500}}
          throw new Error('fetch failed')
        },
      },
    }
    const hooks = await SvcHooks({client})
    await asked(hooks, 'gone', {reply: 'once'})
    await asked(hooks, 'refused', {reply: 'once'})
    await asked(hooks, 'thrown', {reply: 'reject', message: 'no'})
    // The 404's reply was made (and settled) before the later requests' failures were reported.
    await waitFor(() => lines().filter((l) => l[0] === 'permission.reply_failed').length >= 2, 90_000, `two failures (${JSON.stringify(lines())})`)
    expect(called).toEqual(['gone', 'refused', 'thrown'])
    const failed = lines().filter((l) => l[0] === 'permission.reply_failed')
    expect(failed).toEqual([
      ['permission.reply_failed', 'refused', 'once', 'OpenCode answered 500: database is locked', 'make deploy'],
      ['permission.reply_failed', 'thrown', 'reject', 'fetch failed', 'make deploy'],
    ])
    // A client with no way to reply at all is a failure too, not a silence.
    const bare = await SvcHooks({client: {}})
    await asked(bare, 'nomethod', {reply: 'once'})
    await waitFor(() => lines().some((l) => l[0] === 'permission.reply_failed' && l[1] === 'nomethod'), 90_000, 'the failure without a client method')
    // The hook maps it: still waiting at the dialog, the failure as the agent's error.
    expect(opencode.onHook('permission.reply_failed', {id: 'refused', permission: 'bash', metadata: {command: 'make deploy'}, reply: 'once', error: 'OpenCode answered 500: database is locked'})).toEqual({
      activity: 'waiting_for_input',
      detail: 'Permission: bash: make deploy',
      error: 'svc could not give OpenCode the allow of its bash request (OpenCode answered 500: database is locked); its dialog still asks',
    })
  })

  it('a permission request is asked as an approval; the hook prints pending, then the reply OpenCode takes', () => {
    expect(opencode.permissionAsk).toBe(permissionAskOf)
    // As OpenCode 1.18.33 sends it with permission.bash = ask.
    const bash = {id: 'per_1', sessionID: 's', permission: 'bash', patterns: ['echo hi > made.txt', 'sleep 2'], always: ['echo *'], metadata: {command: 'echo hi > made.txt && sleep 2'}, tool: {messageID: 'm', callID: 'c'}}
    expect(permissionAskOf('permission.asked', bash)).toEqual({tool: 'bash', summary: 'echo hi > made.txt && sleep 2', input: {patterns: ['echo hi > made.txt', 'sleep 2'], metadata: {command: 'echo hi > made.txt && sleep 2'}}})
    expect(permissionAskOf('permission.asked', {permission: 'external_directory', patterns: ['/etc/*'], metadata: {filepath: '/etc/passwd', parentDir: '/etc'}})).toMatchObject({tool: 'external_directory', summary: '/etc/*'})
    // An edit's diff too large for the Hub is left out; what it edits stays.
    const edit = permissionAskOf('permission.asked', {permission: 'edit', patterns: ['src/a.ts'], metadata: {filepath: '/w/src/a.ts', diff: 'x'.repeat(100_000)}})
    expect(edit).toEqual({tool: 'edit', summary: 'src/a.ts', input: {patterns: ['src/a.ts'], metadata: {filepath: '/w/src/a.ts'}}})
    expect(permissionAskOf('permission.replied', bash)).toBeNull()
    expect(permissionAskOf('permission.asked', null)).toEqual({tool: 'permission', summary: '', input: {patterns: [], metadata: {}}})
    expect(JSON.parse(opencode.permissionPending!('permission.asked'))).toEqual({pending: true})
    expect(opencode.permissionAnswer!('permission.asked', {behavior: 'allow'})).toBe('{"reply":"once"}\n')
    expect(JSON.parse(opencode.permissionAnswer!('permission.asked', {behavior: 'deny', message: 'Denied by the user (through svc): no'}))).toEqual({reply: 'reject', message: 'Denied by the user (through svc): no'})
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
    // (Reported so only when the Hub could not be asked for an approval.)
    expect(opencode.onHook('permission.asked', {id: 'per_1', sessionID: 's', permission: 'bash', patterns: ['echo hi > made.txt', 'sleep 2'], metadata: {command: 'echo hi > made.txt && sleep 2'}})).toEqual({activity: 'waiting_for_input', detail: 'Permission: bash: echo hi > made.txt && sleep 2'})
    expect(opencode.onHook('permission.asked', {permission: 'external_directory', patterns: ['/etc/*']})).toEqual({activity: 'waiting_for_input', detail: 'Permission: external_directory: /etc/*'})
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
