import {spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {prepareHarnessHome} from './prepare-home.js'
import {gemini, geminiHookError, geminiHookUsage, geminiOnHook, geminiSessionUsage, toolDetail} from './gemini.js'
import {GEMINI_HOOK_EVENTS, SVC_HOOK_NAME, geminiSettings, shellQuote} from './gemini-config.js'
import {harnessModule} from './registry.js'
import type {LaunchContext} from './types.js'

const KEY = 'AIzaSy-secret-gemini-key-0123456789abcdef'
const dirs: string[] = []
const tmp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

function ctx(over: Partial<LaunchContext> = {}): LaunchContext {
  return {
    agentId: 'a1',
    agentName: 'fix',
    home: tmp('svc-gemini-home-'),
    workdir: '/srv/work/fix',
    resume: false,
    env: {GEMINI_API_KEY: KEY},
    authType: 'api-key',
    hookCommand: ['/usr/bin/node', "/opt/svc path/it's/run.js", 'hook', 'gemini'],
    userHome: tmp('svc-gemini-user-'),
    ...over,
  }
}
const readJson = (p: string) => JSON.parse(readFileSync(p, 'utf8'))
const settingsOf = (c: LaunchContext) => readJson(join(c.home, '.gemini', 'settings.json'))
const allFiles = (dir: string): string[] =>
  readdirSync(dir, {withFileTypes: true}).flatMap((e) => (e.isDirectory() ? allFiles(join(dir, e.name)) : [readFileSync(join(dir, e.name), 'utf8')]))

/** Payloads as Gemini CLI 0.61 wrote them on a hook's stdin (captured from a real run). */
const base = {session_id: 's1', transcript_path: '/h/.gemini/tmp/wd/chats/session-1.jsonl', cwd: '/srv/work/fix', timestamp: '2026-11-24T21:05:07.404Z'}
const PAYLOADS = {
  SessionStart: {...base, hook_event_name: 'SessionStart', source: 'startup'},
  BeforeAgent: {...base, hook_event_name: 'BeforeAgent', prompt: 'create made.txt please'},
  BeforeTool: {...base, hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: {command: 'npm test', description: 'run the tests'}},
  Notification: {
    ...base,
    hook_event_name: 'Notification',
    notification_type: 'ToolPermission',
    message: 'Tool Confirm Shell Command requires execution',
    details: {type: 'exec', title: 'Confirm Shell Command', command: 'echo hi > made.txt; sleep 3', rootCommand: 'echo, redirection (>), sleep'},
  },
  AfterTool: {...base, hook_event_name: 'AfterTool', tool_name: 'run_shell_command', tool_input: {command: 'npm test'}, tool_response: {llmContent: 'ok'}},
  AfterAgent: {...base, hook_event_name: 'AfterAgent', prompt: 'create made.txt please', prompt_response: 'Created made.txt.', stop_hook_active: false},
  SessionEnd: {...base, hook_event_name: 'SessionEnd', reason: 'exit'},
}

describe('gemini harness module', () => {
  it('is registered as the built-in `gemini` with its install hint and auth types', () => {
    const m = harnessModule('gemini')
    expect(m).toBe(gemini)
    expect(m).toMatchObject({executable: 'gemini', install: 'npm install -g @google/gemini-cli', taskInArgs: true})
    expect(m!.auth.default).toBe('api-key')
    expect(m!.auth.types['api-key'].secrets).toEqual(['GEMINI_API_KEY'])
    expect(m!.auth.types['vertex-ai'].secrets).toEqual(['GOOGLE_API_KEY'])
    expect(m!.auth.types['credentials-file']).toMatchObject({secrets: [], credentialsFile: '.gemini/oauth_creds.json'})
  })

  it('passes the model, the task as the interactive first prompt, and --resume latest on resume', () => {
    expect(gemini.args(ctx())).toEqual([])
    expect(gemini.args(ctx({model: 'gemini-2.5-pro', task: 'fix the test'}))).toEqual(['--model', 'gemini-2.5-pro', '--prompt-interactive=fix the test'])
    // One argv element: a task starting with `-` is never taken for an option.
    expect(gemini.args(ctx({task: '--yolo'}))).toEqual(['--prompt-interactive=--yolo'])
    expect(gemini.args(ctx({resume: true, task: 'fix it', model: 'm'}))).toEqual(['--model', 'm', '--resume', 'latest'])
  })

  it('keeps config in the agent HOME, skips the relaunch, and never puts a secret in its env', () => {
    const c = ctx()
    const env = gemini.env!(c)
    expect(env).toMatchObject({GEMINI_CLI_HOME: c.home, GEMINI_CLI_NO_RELAUNCH: 'true'})
    // A harness config's env that sets it wins (the module's env is applied over it).
    expect(gemini.env!(ctx({env: {GEMINI_CLI_NO_RELAUNCH: ''}}))).not.toHaveProperty('GEMINI_CLI_NO_RELAUNCH')
    expect(JSON.stringify(env)).not.toContain(KEY)
    expect(gemini.env!(ctx({authType: 'vertex-ai'}))).toMatchObject({GOOGLE_GENAI_USE_VERTEXAI: 'true'})
  })
})

describe('gemini hooks → activity', () => {
  it('maps each event of a turn as the real CLI fires them', () => {
    expect(geminiOnHook('SessionStart', PAYLOADS.SessionStart)).toBeNull()
    expect(geminiOnHook('BeforeAgent', PAYLOADS.BeforeAgent)).toEqual({activity: 'thinking'})
    expect(geminiOnHook('BeforeTool', PAYLOADS.BeforeTool)).toEqual({activity: 'executing', detail: 'run_shell_command: npm test'})
    expect(geminiOnHook('Notification', PAYLOADS.Notification)).toEqual({
      activity: 'waiting_for_input',
      detail: 'Confirm Shell Command: echo hi > made.txt; sleep 3',
    })
    expect(geminiOnHook('AfterTool', PAYLOADS.AfterTool)).toEqual({activity: 'thinking'})
    expect(geminiOnHook('AfterAgent', PAYLOADS.AfterAgent)).toEqual({activity: 'idle', turnEnded: true})
    expect(geminiOnHook('SessionEnd', PAYLOADS.SessionEnd)).toBeNull()
  })

  it('reports a question to the user as waiting_for_input, and an edit confirmation by its file', () => {
    expect(geminiOnHook('BeforeTool', {tool_name: 'ask_user', tool_input: {questions: [{question: 'Which branch?', type: 'text'}]}})).toEqual({
      activity: 'waiting_for_input',
      detail: 'ask_user: Which branch?',
    })
    expect(geminiOnHook('Notification', {notification_type: 'ToolPermission', details: {type: 'edit', title: 'Confirm Edit', fileName: 'a.ts', filePath: '/w/a.ts'}})).toEqual({
      activity: 'waiting_for_input',
      detail: 'Confirm Edit: /w/a.ts',
    })
    expect(geminiOnHook('Notification', {notification_type: 'SomethingElse'})).toBeNull()
  })

  it('shortens details to one line of at most 200 characters, tool name first', () => {
    const d = geminiOnHook('BeforeTool', {tool_name: 'run_shell_command', tool_input: {command: `echo a\n  && ${'x'.repeat(400)}`}})!.detail!
    expect(d.startsWith('run_shell_command: echo a && xxx')).toBe(true)
    expect(d.length).toBeLessThanOrEqual(200)
    expect(toolDetail('write_file', {file_path: '/w/src/a.ts', content: 'big'})).toBe('write_file: /w/src/a.ts')
    expect(toolDetail('grep_search', {pattern: 'TODO', dir_path: 'src'})).toBe('grep_search: TODO in src')
    expect(toolDetail('mcp_gh_list_issues', {repo: 'o/r'})).toBe('mcp_gh_list_issues: o/r')
    expect(toolDetail(undefined, null)).toBe('tool')
  })

  it('tolerates missing or odd payloads', () => {
    expect(geminiOnHook('BeforeTool', null)).toEqual({activity: 'executing', detail: 'tool'})
    expect(geminiOnHook('Notification', 'x')).toEqual({activity: 'waiting_for_input', detail: 'Permission requested'})
    expect(geminiOnHook('Nope', {})).toBeNull()
  })

  it('a turn that ended on an API error: the error Gemini CLI wrote in its session file (recorded from 0.61 against a 401)', async () => {
    const transcript = join(process.cwd(), 'test', 'fixtures', 'harness', 'gemini-401-session.jsonl')
    const payload = {session_id: 'd6c0c732-f37a-4564-b63a-ffcb6ee307a1', transcript_path: transcript, hook_event_name: 'AfterAgent', prompt: 'say hi', prompt_response: '[no response text]'}
    expect(await geminiHookError('AfterAgent', payload)).toBe('API Error: {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}')
    expect(gemini.errorOf).toBe(geminiHookError)
    // A turn with an answer, another event, no file: nothing read, nothing reported.
    expect(await geminiHookError('AfterAgent', {...payload, prompt_response: 'Hello!'})).toBeUndefined()
    expect(await geminiHookError('BeforeAgent', payload)).toBeUndefined()
    expect(await geminiHookError('AfterAgent', {...payload, transcript_path: join(tmpdir(), 'no-such-session.jsonl')})).toBeUndefined()
    // The next prompt of the session: the error belongs to the turn before.
    const later = join(mkdtempSync(join(tmpdir(), 'svc-gemini-err-')), 's.jsonl')
    writeFileSync(later, readFileSync(transcript, 'utf8') + JSON.stringify({id: 'u2', timestamp: 't', type: 'user', content: [{text: 'again'}]}) + '\n')
    expect(await geminiHookError('AfterAgent', {...payload, transcript_path: later})).toBeUndefined()
  })

  it('answers every hook with an empty JSON object (nothing to change, nothing shown)', () => {
    for (const e of GEMINI_HOOK_EVENTS) expect(JSON.parse(gemini.hookOutput!(e, {})!)).toEqual({})
  })
})

describe('gemini session usage', () => {
  /** A session file as Gemini CLI 0.61 writes it: records, messages rewritten under their id. */
  const session = [
    {sessionId: 'sess-1', projectHash: 'h', startTime: 't', kind: 'main'},
    {$set: {messages: [{id: 'u0', type: 'user', content: [{text: 'context'}]}]}},
    {id: 'u1', type: 'user', content: [{text: 'go'}]},
    {id: 'g1', type: 'gemini', content: '', tokens: {input: 1000, output: 50, cached: 400, thoughts: 20, tool: 0, total: 1070}, model: 'gemini-2.5-flash'},
    {$set: {lastUpdated: 't'}},
    // The same message again once its tool call is recorded: counted once.
    {id: 'g1', type: 'gemini', content: '', tokens: {input: 1000, output: 50, cached: 400, thoughts: 20, tool: 0, total: 1070}, model: 'gemini-2.5-flash', toolCalls: [{}]},
    {id: 'u2', type: 'user', content: [{functionResponse: {}}]},
    {id: 'g2', type: 'gemini', content: 'done', tokens: {input: 1200, output: 10, cached: 0, thoughts: 0, tool: 5, total: 1215}, model: 'gemini-2.5-pro'},
  ]
  const write = (records: unknown[], tail = '') => {
    const p = join(tmp('svc-gemini-usage-'), 'session.jsonl')
    writeFileSync(p, records.map((r) => JSON.stringify(r)).join('\n') + '\n' + tail)
    return p
  }

  it('sums each model call once: input without cached, cached as cache reads, thoughts as output', async () => {
    expect(await geminiSessionUsage(write(session, '{"id":"g3","type":"gem'))).toEqual({
      sessionId: 'sess-1',
      inputTokens: 600 + 1205,
      outputTokens: 70 + 10,
      cacheReadTokens: 400,
      modelCalls: 2,
      model: 'gemini-2.5-pro',
    })
  })

  it('replays a $set of all messages (resume, rewind) over what came before', async () => {
    const rewound = [...session, {$set: {messages: [{id: 'g2', type: 'gemini', tokens: {input: 10, output: 1}}]}}]
    expect(await geminiSessionUsage(write(rewound), 'given')).toMatchObject({sessionId: 'given', inputTokens: 10, outputTokens: 1, modelCalls: 1})
  })

  it('is read at the end of a turn only, from the path the payload names (the module\'s usageOf)', async () => {
    expect(gemini.usageOf).toBe(geminiHookUsage)
    const p = write(session)
    expect(await geminiHookUsage('AfterAgent', {...PAYLOADS.AfterAgent, transcript_path: p})).toMatchObject({sessionId: 's1', modelCalls: 2})
    expect(await geminiHookUsage('BeforeTool', {...PAYLOADS.BeforeTool, transcript_path: p})).toBeUndefined()
    expect(await geminiHookUsage('AfterAgent', {transcript_path: '/nonexistent/x.jsonl'})).toBeUndefined()
    expect(await geminiHookUsage('AfterAgent', null)).toBeUndefined()
  })
})

describe('gemini prepare', () => {
  it('writes auth, trust, quiet first-run settings and the svc hooks, never the key', async () => {
    const c = ctx()
    await gemini.prepare(c)
    const s = settingsOf(c)
    expect(s.security.auth.selectedType).toBe('gemini-api-key')
    expect(s).toMatchObject({
      hooksConfig: {enabled: true, notifications: false},
      general: {enableAutoUpdate: false, enableAutoUpdateNotification: false},
      privacy: {usageStatisticsEnabled: false},
      telemetry: {enabled: false},
      ide: {enabled: false, hasSeenNudge: true},
    })
    expect(s.security.environmentVariableRedaction.allowed).toEqual(expect.arrayContaining(['SVC_AUTH_TOKEN', 'SVC_AUTH_TOKEN_FILE', 'SVC_AGENT_ID', 'SVC_HUB_ENDPOINT']))
    expect(Object.keys(s.hooks).sort()).toEqual([...GEMINI_HOOK_EVENTS].sort())
    expect(readJson(join(c.home, '.gemini', 'trustedFolders.json'))).toEqual({'/srv/work/fix': 'TRUST_FOLDER'})
    for (const text of allFiles(c.home)) expect(text).not.toContain(KEY)
  })

  it('writes hook commands that run the hook argv exactly, with the event last', async () => {
    const c = ctx({hookCommand: ['/bin/echo', "it's a $HOME `x`", 'hook', 'gemini']})
    await gemini.prepare(c)
    const cmd = settingsOf(c).hooks.BeforeTool[0].hooks[0]
    expect(cmd).toMatchObject({name: SVC_HOOK_NAME, type: 'command'})
    // Gemini CLI runs the command with `bash -c`.
    const out = spawnSync('bash', ['-c', cmd.command], {encoding: 'utf8'})
    expect(out.stdout).toBe("it's a $HOME `x` hook gemini BeforeTool\n")
    expect(shellQuote('/usr/bin/node')).toBe('/usr/bin/node')
  })

  it('is idempotent and keeps what the CLI and the user wrote, replacing only its own hooks', async () => {
    const c = ctx()
    const dir = join(c.home, '.gemini')
    mkdirSync(dir, {recursive: true})
    const mine = {matcher: 'write_file', hooks: [{name: 'lint', type: 'command', command: 'lint.sh'}]}
    // An older svc listened to SessionStart: its entry goes, the user's stays.
    const older = {matcher: '*', hooks: [{name: SVC_HOOK_NAME, type: 'command', command: '/old/svc hook gemini SessionStart'}]}
    const greet = {matcher: '*', hooks: [{name: 'greet', type: 'command', command: 'echo hi'}]}
    writeFileSync(
      join(dir, 'settings.json'),
      JSON.stringify({ui: {theme: 'Dracula'}, model: {name: 'gemini-2.5-pro'}, hooks: {BeforeTool: [mine], SessionStart: [older, greet], SessionEnd: [older]}, security: {environmentVariableRedaction: {allowed: ['MY_VAR']}}}),
    )
    writeFileSync(join(dir, 'trustedFolders.json'), JSON.stringify({'/other': 'DO_NOT_TRUST'}))
    await gemini.prepare(c)
    const first = readFileSync(join(dir, 'settings.json'), 'utf8')
    await gemini.prepare({...c, hookCommand: ['/new/svc', 'hook', 'gemini']})
    const s = settingsOf(c)
    expect(s.ui.theme).toBe('Dracula')
    expect(s.model.name).toBe('gemini-2.5-pro')
    expect(s.hooks.BeforeTool).toHaveLength(2)
    expect(s.hooks.BeforeTool[0]).toEqual(mine)
    expect(s.hooks.BeforeTool[1].hooks[0].command).toBe('/new/svc hook gemini BeforeTool')
    expect(s.hooks.SessionStart).toEqual([greet])
    expect(s.hooks).not.toHaveProperty('SessionEnd')
    expect(s.security.environmentVariableRedaction.allowed).toEqual(['MY_VAR', 'SVC_AUTH_TOKEN', 'SVC_AUTH_TOKEN_FILE', 'SVC_AGENT_ID', 'SVC_HUB_ENDPOINT'])
    expect(readJson(join(dir, 'trustedFolders.json'))).toEqual({'/other': 'DO_NOT_TRUST', '/srv/work/fix': 'TRUST_FOLDER'})
    await gemini.prepare(c)
    expect(readFileSync(join(dir, 'settings.json'), 'utf8')).toBe(first)
  })

  it('starts over from an unreadable settings file, keeping a copy of it', async () => {
    const c = ctx()
    const dir = join(c.home, '.gemini')
    mkdirSync(dir, {recursive: true})
    writeFileSync(join(dir, 'settings.json'), '{ // hand edited\n "ui": {} }')
    await gemini.prepare(c)
    expect(settingsOf(c).security.auth.selectedType).toBe('gemini-api-key')
    expect(readFileSync(join(dir, 'settings.json.svc-unreadable'), 'utf8')).toContain('hand edited')
  })

  it('maps the thinking level to the CLI model aliases, and removes them when unset', async () => {
    expect(geminiSettings({}, {hookCommand: ['svc'], authType: 'api-key', thinkingLevel: 'medium'}).modelConfigs).toBeUndefined()
    const c = ctx({thinkingLevel: 'off'})
    await gemini.prepare(c)
    const aliases = settingsOf(c).modelConfigs.customAliases
    expect(aliases['chat-base-2.5'].modelConfig.generateContentConfig.thinkingConfig).toEqual({thinkingBudget: 0})
    expect(aliases['chat-base-3'].modelConfig.generateContentConfig.thinkingConfig).toEqual({thinkingLevel: 'LOW'})
    expect(aliases['gemini-2.5-pro'].modelConfig).toMatchObject({model: 'gemini-2.5-pro', generateContentConfig: {thinkingConfig: {thinkingBudget: 128}}})
    await gemini.prepare({...c, thinkingLevel: 'high'})
    expect(settingsOf(c).modelConfigs.customAliases['chat-base-3'].modelConfig.generateContentConfig.thinkingConfig).toEqual({thinkingLevel: 'HIGH'})
    await gemini.prepare({...c, thinkingLevel: undefined})
    expect(settingsOf(c).modelConfigs.customAliases).toEqual({})
  })

  it('credentials-file auth: copies the user login in and selects oauth-personal; a missing login is a clear error', async () => {
    const c = ctx({authType: 'credentials-file', env: {}})
    await expect(prepareHarnessHome(gemini, c)).rejects.toThrow(/~\/\.gemini\/oauth_creds\.json.*sign in with `gemini`/)
    mkdirSync(join(c.userHome, '.gemini'), {recursive: true})
    writeFileSync(join(c.userHome, '.gemini', 'oauth_creds.json'), '{"refresh_token":"r"}')
    await prepareHarnessHome(gemini, c)
    expect(readFileSync(join(c.home, '.gemini', 'oauth_creds.json'), 'utf8')).toBe('{"refresh_token":"r"}')
    expect(settingsOf(c).security.auth.selectedType).toBe('oauth-personal')
    await gemini.prepare({...ctx({authType: 'vertex-ai'}), home: c.home})
    expect(settingsOf(c).security.auth.selectedType).toBe('vertex-ai')
  })
})
