import {spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, describe, expect, it} from 'vitest'
import {prepareHarnessHome} from './prepare-home.js'
import {headerPath, mergeConfigToml, shellCommand} from './codex-config.js'
import {codex, codexHookUsage, usageFromTranscript} from './codex.js'
import {harnessModule} from './registry.js'
import type {LaunchContext} from './types.js'

const CODEX_BIN = fileURLToPath(new URL('../../../node_modules/.bin/codex', import.meta.url))
const root = mkdtempSync(join(tmpdir(), 'svc-codex-unit-'))
afterAll(() => rmSync(root, {recursive: true, force: true}))

const KEY = 'sk-unit-test-secret-0123456789abcdef'
function ctx(over: Partial<LaunchContext> = {}): LaunchContext {
  const dir = mkdtempSync(join(root, 'agent-'))
  mkdirSync(join(dir, 'home'))
  mkdirSync(join(dir, 'work'))
  return {
    agentId: 'a-1',
    agentName: 'fix',
    home: join(dir, 'home'),
    workdir: join(dir, 'work'),
    resume: false,
    env: {OPENAI_API_KEY: KEY, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1'},
    authType: 'api-key',
    hookCommand: ['/usr/bin/node', '/opt/svc it/bin/run.js', 'hook', 'codex'],
    userHome: join(dir, 'user'),
    ...over,
  }
}

/** Codex itself loads the config (a duplicate table or a bad value fails here). */
function codexLoads(home: string): {code: number | null; err: string} {
  const r = spawnSync(CODEX_BIN, ['features', 'list'], {env: {...process.env, HOME: home, CODEX_HOME: join(home, '.codex')}, encoding: 'utf8', timeout: 30_000})
  return {code: r.status, err: r.stderr}
}

describe('codex harness module', () => {
  it('is registered under its type with its executable, install hint and auth types', () => {
    expect(harnessModule('codex')).toBe(codex)
    expect(codex.executable).toBe('codex')
    expect(codex.install).toContain('npm install -g @openai/codex')
    expect(codex.auth.default).toBe('api-key')
    expect(codex.auth.types['api-key'].secrets).toEqual(['OPENAI_API_KEY'])
    expect(codex.auth.types['credentials-file']).toMatchObject({secrets: [], credentialsFile: '.codex/auth.json'})
    expect(codex.taskInArgs).toBe(true)
  })

  it('args: model, reasoning effort, the task as the first prompt; resume continues the last session', () => {
    const c = ctx({model: 'gpt-5.1-codex', thinkingLevel: 'high', task: '-v fix the test'})
    expect(codex.args(c)).toEqual([
      '--dangerously-bypass-hook-trust', '--no-daemon', '--model', 'gpt-5.1-codex', '--config', 'model_reasoning_effort="high"', '--', '-v fix the test',
    ])
    expect(codex.args({...c, thinkingLevel: 'off', model: undefined, task: undefined})).toEqual([
      '--dangerously-bypass-hook-trust', '--no-daemon', '--config', 'model_reasoning_effort="none"',
    ])
    expect(codex.args({...c, resume: true})).toEqual([
      'resume', '--last', '--dangerously-bypass-hook-trust', '--no-daemon', '--model', 'gpt-5.1-codex', '--config', 'model_reasoning_effort="high"',
    ])
    expect(codex.env!(c)).toEqual({CODEX_HOME: join(c.home, '.codex')})
  })

  it('prepare: a provider at OPENAI_BASE_URL reading the key from the environment, trust, approvals, hooks; no secret on disk', async () => {
    const c = ctx()
    await codex.prepare(c)
    const config = readFileSync(join(c.home, '.codex', 'config.toml'), 'utf8')
    expect(config).toContain('model_provider = "svc-openai"\n')
    expect(config).toContain('[model_providers.svc-openai]\nname = "OpenAI (svc)"\nbase_url = "http://127.0.0.1:9/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n')
    expect(config).toContain(`[projects.${JSON.stringify(c.workdir)}]\ntrust_level = "trusted"\n`)
    expect(config).toContain('approval_policy = "never"\nsandbox_mode = "danger-full-access"\ncheck_for_update_on_startup = false\n')
    const hooks = JSON.parse(readFileSync(join(c.home, '.codex', 'hooks.json'), 'utf8')).hooks
    expect(Object.keys(hooks)).toEqual(['UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'PostToolUse', 'Stop', 'Interrupt'])
    expect(hooks.PreToolUse).toEqual([{hooks: [{type: 'command', command: "/usr/bin/node '/opt/svc it/bin/run.js' hook codex PreToolUse"}]}])
    for (const f of readdirSync(join(c.home, '.codex'))) expect(readFileSync(join(c.home, '.codex', f), 'utf8')).not.toContain(KEY)
    expect(codexLoads(c.home)).toMatchObject({code: 0})

    const plain = ctx({env: {OPENAI_API_KEY: KEY}})
    await codex.prepare(plain)
    expect(readFileSync(join(plain.home, '.codex', 'config.toml'), 'utf8')).toContain('base_url = "https://api.openai.com/v1"')
  })

  it('prepare is idempotent and keeps what Codex wrote itself', async () => {
    const c = ctx()
    await codex.prepare(c)
    const path = join(c.home, '.codex', 'config.toml')
    // What Codex 0.169 writes on its own first run, plus another project's trust and hook state.
    writeFileSync(path, readFileSync(path, 'utf8') + '\n[tui]\nscreen_reader_detection_done = true\n\n[tui.model_availability_nux]\n"gpt-6.1-sol" = 2\n\n[projects."/elsewhere"]\ntrust_level = "untrusted"\n')
    await codex.prepare({...c, env: {OPENAI_API_KEY: KEY, OPENAI_BASE_URL: 'http://127.0.0.1:10/v1'}})
    const once = readFileSync(path, 'utf8')
    await codex.prepare({...c, env: {OPENAI_API_KEY: KEY, OPENAI_BASE_URL: 'http://127.0.0.1:10/v1'}})
    expect(readFileSync(path, 'utf8')).toBe(once)
    expect(once.match(/\[model_providers\.svc-openai\]/g)).toHaveLength(1)
    expect(once).toContain('base_url = "http://127.0.0.1:10/v1"')
    expect(once).not.toContain('127.0.0.1:9/')
    expect(once).toContain('[tui.model_availability_nux]\n"gpt-6.1-sol" = 2')
    expect(once).toContain('[projects."/elsewhere"]\ntrust_level = "untrusted"')
    expect(codexLoads(c.home)).toMatchObject({code: 0})
  })

  it('prepare trusts the work tree alone: a .git file the agent wrote widens nothing', async () => {
    const c = ctx()
    const checkout = join(c.workdir, '..', 'checkout')
    mkdirSync(join(checkout, '.git', 'worktrees', 'x'), {recursive: true})
    // What an agent could write in its own work tree: a .git naming a worktree of another checkout.
    writeFileSync(join(c.workdir, '.git'), `gitdir: ${join(checkout, '.git', 'worktrees', 'x')}\n`)
    await codex.prepare(c)
    const config = readFileSync(join(c.home, '.codex', 'config.toml'), 'utf8')
    expect(config.match(/^\[projects\..*\]$/gm)).toEqual([`[projects.${JSON.stringify(c.workdir)}]`])
    expect(readdirSync(c.workdir)).toEqual(['.git'])
  })

  it('credentials-file auth copies the user\'s codex login and writes no provider', async () => {
    const c = ctx({authType: 'credentials-file', env: {}})
    mkdirSync(join(c.userHome, '.codex'), {recursive: true})
    writeFileSync(join(c.userHome, '.codex', 'auth.json'), '{"tokens":{"id_token":"x"}}')
    await prepareHarnessHome(codex, c)
    expect(readFileSync(join(c.home, '.codex', 'auth.json'), 'utf8')).toBe('{"tokens":{"id_token":"x"}}')
    expect(readFileSync(join(c.home, '.codex', 'config.toml'), 'utf8')).not.toContain('model_provider')
    const missing = ctx({authType: 'credentials-file', env: {}})
    await expect(prepareHarnessHome(codex, missing)).rejects.toThrow(/auth\.json/)
  })
})

// Payloads as Codex 0.169 sent them to its hooks (captured from the real CLI against the scripted server).
const base = {session_id: 's-1', turn_id: 't-1', transcript_path: '/x.jsonl', cwd: '/w', model: 'gpt-5.1-codex', permission_mode: 'bypassPermissions'}
describe('codex hook mapping', () => {
  it('maps prompt, tool, permission, question and stop events', () => {
    expect(codex.onHook('UserPromptSubmit', {...base, hook_event_name: 'UserPromptSubmit', prompt: 'write the file'})).toEqual({activity: 'thinking'})
    expect(codex.onHook('PreToolUse', {...base, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: {command: 'npm test'}, tool_use_id: 'call_1'})).toEqual({activity: 'executing', detail: 'Bash: npm test'})
    expect(codex.onHook('PostToolUse', {...base, tool_name: 'Bash', tool_input: {command: 'npm test'}, tool_response: ''})).toEqual({activity: 'thinking'})
    expect(codex.onHook('PermissionRequest', {...base, tool_name: 'Bash', tool_input: {command: 'touch /etc/x', description: 'need /etc'}})).toEqual({activity: 'waiting_for_input', detail: 'Permission: Bash: touch /etc/x'})
    expect(codex.onHook('PreToolUse', {...base, tool_name: 'request_user_input', tool_input: {questions: [{header: 'Pick', id: 'q1', question: 'Which color?'}]}})).toEqual({activity: 'waiting_for_input', detail: 'Question: Which color?'})
    expect(codex.onHook('Stop', {...base, hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'done'})).toEqual({activity: 'idle', turnEnded: true})
    expect(codex.onHook('Interrupt', {...base, hook_event_name: 'Interrupt'})).toEqual({activity: 'idle', turnEnded: true})
    expect(codex.onHook('SessionStart', {...base, source: 'startup'})).toBeNull()
    expect(codex.onHook('Stop', null)).toEqual({activity: 'idle', turnEnded: true})
  })

  it('summarises patches by file and long commands to about 200 characters', () => {
    const patch = '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** Add File: b.md\n+hi\n*** End Patch'
    expect(codex.onHook('PreToolUse', {tool_name: 'apply_patch', tool_input: {command: patch}})).toEqual({activity: 'executing', detail: 'apply_patch: src/a.ts, b.md'})
    const long = codex.onHook('PreToolUse', {tool_name: 'Bash', tool_input: {command: `echo ${'x'.repeat(500)}\nls`}})!
    expect(long.detail!.length).toBe(200)
    expect(long.detail).toMatch(/^Bash: echo x+…$/)
    expect(codex.onHook('PreToolUse', {tool_name: 'mcp__docs__search', tool_input: {q: 'tmux'}})).toEqual({activity: 'executing', detail: 'mcp__docs__search: {"q":"tmux"}'})
  })
})

describe('codex usage from the session transcript', () => {
  const line = (o: unknown) => JSON.stringify(o)
  const tokenCount = (input: number, cached: number, output: number) =>
    line({type: 'event_msg', payload: {type: 'token_count', info: {total_token_usage: {input_tokens: input, cached_input_tokens: cached, cache_write_input_tokens: 0, output_tokens: output, reasoning_output_tokens: 0, total_tokens: input + output}}}})
  const transcript = [
    line({type: 'session_meta', payload: {id: 's-1'}}),
    line({type: 'turn_context', payload: {turn_id: 't-1', model: 'gpt-5.1-codex'}}),
    line({type: 'event_msg', payload: {type: 'token_count', info: null, rate_limits: {}}}),
    tokenCount(100, 10, 20),
    tokenCount(400, 30, 60),
    '{"type":"event_msg","payload":{"type":"token_co',
  ].join('\n')

  it('takes the latest running totals, splits cached input out and counts model calls', () => {
    expect(usageFromTranscript(transcript, 's-1')).toEqual({sessionId: 's-1', inputTokens: 370, outputTokens: 60, cacheReadTokens: 30, cacheWriteTokens: 0, modelCalls: 2, model: 'gpt-5.1-codex'})
    expect(usageFromTranscript(line({type: 'session_meta'}), 's-1')).toBeNull()
  })

  it('codexHookUsage reads the transcript a Stop hook names, and nothing else', async () => {
    const path = join(root, 'rollout.jsonl')
    writeFileSync(path, transcript)
    expect(await codexHookUsage('Stop', {session_id: 's-1', transcript_path: path})).toMatchObject({sessionId: 's-1', inputTokens: 370, modelCalls: 2})
    expect(await codexHookUsage('PreToolUse', {session_id: 's-1', transcript_path: path})).toBeUndefined()
    expect(await codexHookUsage('Stop', {session_id: 's-1', transcript_path: join(root, 'missing.jsonl')})).toBeUndefined()
  })
})

describe('codex config.toml merging', () => {
  it('reads table headers however they are quoted', () => {
    expect(headerPath('[projects."/a b"]')).toEqual(['projects', '/a b'])
    expect(headerPath(" [ projects . '/a' ] # c")).toEqual(['projects', '/a'])
    expect(headerPath('[[hooks.Stop]]')).toEqual(['hooks', 'Stop'])
    expect(headerPath('x = [1, 2]')).toBeNull()
    expect(headerPath('[1, 2]')).toBeNull()
  })

  it('replaces owned keys and tables, keeps the rest', () => {
    const existing = 'model = "o3"\napproval_policy = "on-request"\n\n[projects."/w"]\ntrust_level = "untrusted"\n\n[notice]\nhide = true\n'
    const merged = mergeConfigToml(existing, {approval_policy: 'never', gone: undefined}, [{path: ['projects', '/w'], entries: {trust_level: 'trusted'}}])
    expect(merged).toBe('approval_policy = "never"\nmodel = "o3"\n\n[projects."/w"]\ntrust_level = "trusted"\n\n[notice]\nhide = true\n')
    expect(mergeConfigToml(merged, {approval_policy: 'never', gone: undefined}, [{path: ['projects', '/w'], entries: {trust_level: 'trusted'}}])).toBe(merged)
  })

  it('quotes hook argv for the shell', () => {
    expect(shellCommand(['/usr/bin/node', "/it's here/run.js", 'hook', 'codex', 'Stop'])).toBe("/usr/bin/node '/it'\\''s here/run.js' hook codex Stop")
  })
})
