import {appendFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {prepareHarnessHome} from './prepare-home.js'
import {claude, claudeHookUsage, claudeOnHook, claudeSessionUsage, toolDetail} from './claude.js'
import {CLAUDE_HOOK_EVENTS} from './claude-config.js'
import {harnessModule} from './registry.js'
import type {LaunchContext} from './types.js'

const KEY = 'sk-ant-api03-secret-part-0123456789abcdefghij'
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
    home: tmp('svc-claude-home-'),
    workdir: '/srv/work/fix',
    resume: false,
    env: {ANTHROPIC_API_KEY: KEY},
    authType: 'api-key',
    hookCommand: ['/usr/bin/node', '/opt/svc path/bin/run.js', 'hook', 'claude'],
    userHome: tmp('svc-claude-user-'),
    ...over,
  }
}
const readJson = (p: string) => JSON.parse(readFileSync(p, 'utf8'))
/** Every file under a directory, with its contents. */
const allFiles = (dir: string): string[] =>
  readdirSync(dir, {withFileTypes: true}).flatMap((e) => (e.isDirectory() ? allFiles(join(dir, e.name)) : [readFileSync(join(dir, e.name), 'utf8')]))

describe('claude harness module', () => {
  it('is registered as the built-in `claude` with its install hint and auth types', () => {
    const m = harnessModule('claude')
    expect(m).toBe(claude)
    expect(m).toMatchObject({executable: 'claude', install: 'npm install -g @anthropic-ai/claude-code', taskInArgs: true})
    expect(m!.usageOf).toBe(claudeHookUsage)
    expect(m!.auth.default).toBe('api-key')
    expect(m!.auth.types['api-key'].secrets).toEqual(['ANTHROPIC_API_KEY'])
    expect(m!.auth.types['oauth-token'].secrets).toEqual(['CLAUDE_CODE_OAUTH_TOKEN'])
    expect(m!.auth.types['credentials-file']).toMatchObject({secrets: [], credentialsFile: '.claude/.credentials.json'})
  })

  it('passes the model, the task as the first prompt, and --continue on resume when a conversation was saved', () => {
    expect(claude.args(ctx())).toEqual([])
    expect(claude.args(ctx({model: 'claude-sonnet-4-5', task: 'fix the test'}))).toEqual(['--model', 'claude-sonnet-4-5', 'fix the test'])
    // Never taken for an option, even with the harness config's args after it.
    expect(claude.args(ctx({task: '-fix the test'}))).toEqual([' -fix the test'])
    // A resumed session continues the conversation; the task is not given again.
    const c = ctx({resume: true, task: 'fix it', workdir: '/srv/work.x/fix'})
    expect(claude.args(c)).toEqual(['fix it'])
    mkdirSync(join(c.home, '.claude', 'projects', '-srv-work-x-fix'), {recursive: true})
    expect(claude.args(c)).toEqual(['fix it'])
    writeFileSync(join(c.home, '.claude', 'projects', '-srv-work-x-fix', 'a1b2.jsonl'), '{}\n')
    expect(claude.args(c)).toEqual(['--continue'])
  })

  it('maps the thinking level to Claude Code env and turns off updates and nonessential traffic, secrets never', () => {
    const env = (level?: string) => claude.env!(ctx({thinkingLevel: level}))
    expect(env('off')).toMatchObject({MAX_THINKING_TOKENS: '0'})
    expect(env('low')).toMatchObject({CLAUDE_CODE_EFFORT_LEVEL: 'low'})
    expect(env('high')).toMatchObject({CLAUDE_CODE_EFFORT_LEVEL: 'high'})
    expect(env()).not.toHaveProperty('CLAUDE_CODE_EFFORT_LEVEL')
    expect(env()).not.toHaveProperty('MAX_THINKING_TOKENS')
    expect(env()).toMatchObject({DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1'})
    expect(JSON.stringify(env('high'))).not.toContain(KEY)
  })

  it('prepare answers onboarding, key approval (last 20 chars only) and folder trust, and installs every hook', async () => {
    const c = ctx()
    await claude.prepare(c)
    const state = readJson(join(c.home, '.claude.json'))
    expect(state.hasCompletedOnboarding).toBe(true)
    expect(state.customApiKeyResponses).toEqual({approved: [KEY.slice(-20)], rejected: []})
    expect(state.projects['/srv/work/fix']).toMatchObject({hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true})
    const settings = readJson(join(c.home, '.claude', 'settings.json'))
    for (const event of CLAUDE_HOOK_EVENTS) {
      // PermissionRequest waits on its approval (10 minutes by default) and gives up 30 s before Claude Code would kill it.
      const timeout = event === 'PermissionRequest' ? 630 : 30
      // A Notification hook runs for the elicitation dialog only (CLAUDE_NOTIFICATION_MATCHER).
      const matcher = event === 'Notification' ? 'elicitation_dialog' : ''
      expect(settings.hooks[event], event).toEqual([{matcher, hooks: [{type: 'command', command: `/usr/bin/node '/opt/svc path/bin/run.js' hook claude ${event}`, timeout}]}])
    }
    // The key itself is in no file, and the files are the user's alone.
    for (const text of allFiles(c.home)) expect(text).not.toContain(KEY)
    expect(statSync(join(c.home, '.claude.json')).mode & 0o077).toBe(0)
  })

  it('prepare trusts the work tree by the path given and by its real path', async () => {
    const real = tmp('svc-claude-real-')
    const link = join(tmp('svc-claude-link-'), 'wt')
    symlinkSync(real, link)
    const c = ctx({workdir: link})
    await claude.prepare(c)
    const projects = readJson(join(c.home, '.claude.json')).projects
    expect(projects[link].hasTrustDialogAccepted).toBe(true)
    expect(projects[realpathSync(real)].hasTrustDialogAccepted).toBe(true)
  })

  it('prepare is idempotent and keeps what Claude Code and the user wrote, replacing only its own hooks', async () => {
    const c = ctx()
    await claude.prepare(c)
    const statePath = join(c.home, '.claude.json')
    const settingsPath = join(c.home, '.claude', 'settings.json')
    const state = readJson(statePath)
    state.numStartups = 7
    state.tipsHistory = {'new-user-warmup': 2}
    state.projects['/srv/work/fix'].allowedTools = ['Bash(npm test)']
    writeFileSync(statePath, JSON.stringify(state))
    const settings = readJson(settingsPath)
    settings.model = 'opus'
    settings.hooks.PreToolUse.unshift({matcher: 'Bash', hooks: [{type: 'command', command: 'my-audit'}]})
    writeFileSync(settingsPath, JSON.stringify(settings))

    // Again, with svc moved elsewhere (an upgrade): its hooks are replaced, not added.
    const again = {...c, hookCommand: ['/usr/local/bin/svc', 'hook', 'claude']}
    await claude.prepare(again)
    await claude.prepare(again)
    const state2 = readJson(statePath)
    expect(state2).toMatchObject({numStartups: 7, tipsHistory: {'new-user-warmup': 2}, hasCompletedOnboarding: true})
    expect(state2.customApiKeyResponses.approved).toEqual([KEY.slice(-20)])
    expect(state2.projects['/srv/work/fix']).toMatchObject({allowedTools: ['Bash(npm test)'], hasTrustDialogAccepted: true})
    const settings2 = readJson(settingsPath)
    expect(settings2.model).toBe('opus')
    expect(settings2.hooks.PreToolUse).toEqual([
      {matcher: 'Bash', hooks: [{type: 'command', command: 'my-audit'}]},
      {matcher: '', hooks: [{type: 'command', command: '/usr/local/bin/svc hook claude PreToolUse', timeout: 30}]},
    ])
    expect(settings2.hooks.Stop).toHaveLength(1)
  })

  it("prepare drops an older svc's hook for an event it no longer listens to (SessionStart), keeping the user's", async () => {
    const c = ctx()
    const settingsPath = join(c.home, '.claude', 'settings.json')
    mkdirSync(dirname(settingsPath), {recursive: true})
    const old = {matcher: '', hooks: [{type: 'command', command: '/old/svc hook claude SessionStart', timeout: 30}]}
    const mine = {matcher: '', hooks: [{type: 'command', command: 'echo started'}]}
    const oldEnd = {matcher: '', hooks: [{type: 'command', command: '/old/svc hook claude SessionEnd', timeout: 30}]}
    writeFileSync(settingsPath, JSON.stringify({hooks: {SessionStart: [old, mine], SessionEnd: [oldEnd]}}))
    await claude.prepare(c)
    const hooks = readJson(settingsPath).hooks
    expect(CLAUDE_HOOK_EVENTS).not.toContain('SessionStart')
    expect(hooks.SessionStart).toEqual([mine])
    expect(hooks).not.toHaveProperty('SessionEnd')
    expect(Object.keys(hooks).sort()).toEqual([...CLAUDE_HOOK_EVENTS, 'SessionStart'].sort())
  })

  it('prepare with oauth-token approves no key; credentials-file copies the login and its account', async () => {
    const oauth = ctx({authType: 'oauth-token', env: {CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-token'}})
    await claude.prepare(oauth)
    expect(readJson(join(oauth.home, '.claude.json')).customApiKeyResponses).toBeUndefined()
    expect(allFiles(oauth.home).join('\n')).not.toContain('sk-ant-oat01-token')

    const file = ctx({authType: 'credentials-file', env: {}})
    const missing = prepareHarnessHome(claude, file)
    await expect(missing).rejects.toThrow(/credentials-file.*\.claude\/\.credentials\.json/)
    mkdirSync(join(file.userHome, '.claude'))
    writeFileSync(join(file.userHome, '.claude', '.credentials.json'), '{"claudeAiOauth":{"accessToken":"x"}}')
    writeFileSync(join(file.userHome, '.claude.json'), JSON.stringify({oauthAccount: {emailAddress: 'dev@example.com'}, projects: {'/home/dev': {}}}))
    await prepareHarnessHome(claude, file)
    expect(readFileSync(join(file.home, '.claude', '.credentials.json'), 'utf8')).toContain('accessToken')
    const state = readJson(join(file.home, '.claude.json'))
    expect(state.oauthAccount).toEqual({emailAddress: 'dev@example.com'})
    expect(state.projects).not.toHaveProperty('/home/dev')
  })
})

describe('claude hooks to activity', () => {
  // Payloads as Claude Code 2.1.197 wrote them on the hooks' stdin (shortened).
  const base = {session_id: 's1', transcript_path: '/h/.claude/projects/-w/s1.jsonl', cwd: '/w', permission_mode: 'default'}

  it('maps prompt, tool, permission, notification and stop events', () => {
    expect(claudeOnHook('SessionStart', {...base, hook_event_name: 'SessionStart', source: 'startup'})).toBeNull()
    expect(claudeOnHook('UserPromptSubmit', {...base, prompt: 'write hello'})).toEqual({activity: 'thinking', detail: ''})
    expect(claudeOnHook('PreToolUse', {...base, tool_name: 'Bash', tool_input: {command: 'sleep 1;\n  npm test', description: 'run'}})).toEqual({activity: 'executing', detail: 'Bash: sleep 1; npm test'})
    expect(claudeOnHook('PreToolUse', {...base, tool_name: 'Edit', tool_input: {file_path: '/w/src/a.ts', old_string: 'a'}})).toEqual({activity: 'executing', detail: 'Edit: /w/src/a.ts'})
    expect(claudeOnHook('PreToolUse', {...base, tool_name: 'AskUserQuestion', tool_input: {questions: []}})).toMatchObject({activity: 'waiting_for_input'})
    expect(claudeOnHook('PermissionRequest', {...base, tool_name: 'Bash', tool_input: {command: 'rm -rf build'}})).toEqual({activity: 'waiting_for_input', detail: 'Permission: Bash: rm -rf build'})
    expect(claudeOnHook('PostToolUse', {...base, tool_name: 'Bash', tool_response: {}})).toEqual({activity: 'thinking', detail: ''})
    expect(claudeOnHook('PostToolUseFailure', {...base, tool_name: 'Bash', error: 'x'})).toEqual({activity: 'thinking', detail: ''})
    // A permission prompt's detail stays the PermissionRequest's (the command asked about).
    expect(claudeOnHook('Notification', {...base, message: 'Claude needs your permission', notification_type: 'permission_prompt'})).toEqual({activity: 'waiting_for_input'})
    expect(claudeOnHook('Notification', {...base, message: 'Claude needs your permission to use Bash'})).toEqual({activity: 'waiting_for_input'})
    expect(claudeOnHook('Notification', {...base, message: 'Pick a database', notification_type: 'elicitation_dialog'})).toEqual({activity: 'waiting_for_input', detail: 'Pick a database'})
    expect(claudeOnHook('Notification', {...base, message: 'Claude is waiting for your input', notification_type: 'idle_prompt'})).toBeNull()
    expect(claudeOnHook('Stop', {...base, stop_hook_active: false, last_assistant_message: 'All done.'})).toEqual({activity: 'idle', detail: '', turnEnded: true})
    // StopFailure's `error` is a category; the message Claude Code showed is its last assistant message.
    expect(claudeOnHook('StopFailure', {...base, error: 'rate_limit'})).toEqual({activity: 'idle', turnEnded: true, detail: 'the model request failed: rate_limit', error: 'the model request failed: rate_limit'})
    const refused = 'API Error: Unable to connect to API (ConnectionRefused)'
    expect(claudeOnHook('StopFailure', {...base, error: 'server_error', last_assistant_message: refused})).toEqual({activity: 'idle', turnEnded: true, detail: `${refused} (server_error)`, error: `${refused} (server_error)`})
    expect(claudeOnHook('StopFailure', {...base, error: 'authentication_failed', last_assistant_message: 'Invalid API key · Fix external API key'})).toMatchObject({error: 'Invalid API key · Fix external API key (authentication_failed)'})
    expect(claudeOnHook('Unknown', null)).toBeNull()
    expect(claudeOnHook('PreToolUse', 'not json')).toEqual({activity: 'executing', detail: 'tool'})
  })

  it('keeps a detail to one line of about 200 characters, tool name first', () => {
    const d = toolDetail('Bash', {command: `echo ${'x'.repeat(500)}`})
    expect(d.startsWith('Bash: echo x')).toBe(true)
    expect(d.length).toBeLessThanOrEqual(200)
    expect(toolDetail('mcp__github__create_issue', {title: 'Bug'})).toBe('mcp__github__create_issue: Bug')
    expect(toolDetail('TodoWrite', {todos: []})).toBe('TodoWrite')
  })
})

describe('claude session usage from the transcript', () => {
  const assistant = (id: string, model = 'claude-opus-4-8', usage = {input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 5, cache_creation_input_tokens: 7}) =>
    JSON.stringify({type: 'assistant', sessionId: 's1', requestId: `req_${id}`, message: {id, model, role: 'assistant', usage}})

  it('sums each model call once and reports cumulative totals', async () => {
    const dir = tmp('svc-claude-transcript-')
    const path = join(dir, 's1.jsonl')
    writeFileSync(
      path,
      [
        JSON.stringify({type: 'user', sessionId: 's1', message: {role: 'user', content: 'hi'}}),
        assistant('msg_1'),
        // A streamed message with two content blocks is written twice with the same usage.
        assistant('msg_1'),
        assistant('msg_2', 'claude-sonnet-4-5', {input_tokens: 50, output_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}),
        JSON.stringify({type: 'assistant', sessionId: 's1', isApiErrorMessage: true, message: {id: 'e', model: '<synthetic>', usage: {input_tokens: 0, output_tokens: 0}}}),
        '{"type":"assistant","message":{"usage"', // a line being written
      ].join('\n'),
    )
    expect(await claudeSessionUsage(path)).toEqual({sessionId: 's1', inputTokens: 150, outputTokens: 30, cacheReadTokens: 5, cacheWriteTokens: 7, modelCalls: 2, model: 'claude-sonnet-4-5'})
    expect(await claudeHookUsage('Stop', {session_id: 's1', transcript_path: path})).toMatchObject({sessionId: 's1', modelCalls: 2})
    expect(await claudeHookUsage('PreToolUse', {session_id: 's1', transcript_path: path})).toBeUndefined()
    expect(await claudeSessionUsage(join(dir, 'missing.jsonl'))).toBeUndefined()
  })

  // Claude Code runs its Stop hooks before the turn's last entries reach the transcript
  // (anthropics/claude-code#15812): the usage waits for them.
  const line = (type: string, message: object) => JSON.stringify({type, sessionId: 's1', message})
  const toolCall = line('assistant', {id: 'm1', role: 'assistant', stop_reason: 'tool_use', content: [{type: 'tool_use', id: 't1', name: 'Bash', input: {}}], usage: {input_tokens: 100, output_tokens: 20}})
  const toolResult = line('user', {role: 'user', content: [{type: 'tool_result', tool_use_id: 't1', content: 'ok'}]})
  const answer = (text: string) => line('assistant', {id: 'm2', role: 'assistant', stop_reason: 'end_turn', content: [{type: 'text', text}], usage: {input_tokens: 100, output_tokens: 20}})

  it('on Stop, waits until the turn\'s closing answer is written to the transcript', async () => {
    const path = join(tmp('svc-claude-transcript-'), 's1.jsonl')
    writeFileSync(path, [line('user', {role: 'user', content: 'go'}), toolCall, toolResult].join('\n') + '\n')
    setTimeout(() => appendFileSync(path, answer('Done.') + '\n'), 300)
    const usage = await claudeHookUsage('Stop', {session_id: 's1', transcript_path: path, last_assistant_message: 'Done.'})
    expect(usage).toMatchObject({modelCalls: 2, inputTokens: 200, outputTokens: 40})
  })

  it('on Stop, waits for the answer the payload names, not an earlier one', async () => {
    const path = join(tmp('svc-claude-transcript-'), 's1.jsonl')
    writeFileSync(path, [line('user', {role: 'user', content: 'go'}), answer('First.')].join('\n') + '\n')
    setTimeout(() => appendFileSync(path, [line('user', {role: 'user', content: 'again'}), answer('Second.').replace('"m2"', '"m3"')].join('\n') + '\n'), 300)
    const usage = await claudeHookUsage('Stop', {session_id: 's1', transcript_path: path, last_assistant_message: 'Second.'})
    expect(usage).toMatchObject({modelCalls: 2})
  })

  it('on Stop, reports what the transcript holds once the wait is over', async () => {
    const path = join(tmp('svc-claude-transcript-'), 's1.jsonl')
    writeFileSync(path, [line('user', {role: 'user', content: 'go'}), toolCall, toolResult].join('\n') + '\n')
    const started = Date.now()
    expect(await claudeHookUsage('Stop', {session_id: 's1', transcript_path: path}, 200)).toMatchObject({modelCalls: 1})
    expect(Date.now() - started).toBeGreaterThanOrEqual(200)
    // StopFailure does not wait: the failed request wrote no answer.
    expect(await claudeHookUsage('StopFailure', {session_id: 's1', transcript_path: path}, 60_000)).toMatchObject({modelCalls: 1})
  })
})
