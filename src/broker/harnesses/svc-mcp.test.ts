// Every built-in harness that takes MCP servers gets `svc mcp` as its server `svc` in the agent's
// HOME, beside what the harness or the user configured there (docs/harnesses.md).
import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {claude} from './claude.js'
import {codex} from './codex.js'
import {gemini} from './gemini.js'
import {opencode} from './opencode.js'
import type {LaunchContext} from './types.js'

const dirs: string[] = []
const tmp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

function ctx(type: string, over: Partial<LaunchContext> = {}): LaunchContext {
  return {
    agentId: 'a1',
    agentName: 'lead',
    home: tmp(`svc-mcp-${type}-`),
    workdir: '/srv/work/lead',
    resume: false,
    env: {OPENAI_API_KEY: 'sk-x', ANTHROPIC_API_KEY: 'sk-ant-x', GEMINI_API_KEY: 'g-x'},
    authType: 'api-key',
    hookCommand: ['/usr/bin/node', '/opt/svc/bin/run.js', 'hook', type],
    userHome: tmp('svc-mcp-user-'),
    ...over,
  }
}
const readJson = (p: string) => JSON.parse(readFileSync(p, 'utf8'))
const USER_SERVER = {command: 'other-mcp', args: ['--x']}

describe('svc mcp in each harness config', () => {
  it("Claude Code: ~/.claude.json mcpServers.svc runs `svc mcp`, its tools allowed without a prompt; the user's server and rules stay", async () => {
    const c = ctx('claude')
    writeFileSync(join(c.home, '.claude.json'), JSON.stringify({mcpServers: {mine: USER_SERVER}}))
    mkdirSync(join(c.home, '.claude'))
    writeFileSync(join(c.home, '.claude', 'settings.json'), JSON.stringify({permissions: {allow: ['Bash(ls:*)']}}))
    await claude.prepare(c)
    await claude.prepare(c) // idempotent
    const state = readJson(join(c.home, '.claude.json'))
    expect(state.mcpServers).toEqual({mine: USER_SERVER, svc: {type: 'stdio', command: 'svc', args: ['mcp'], env: {}, alwaysLoad: true}})
    expect(readJson(join(c.home, '.claude', 'settings.json')).permissions.allow).toEqual(['Bash(ls:*)', 'mcp__svc'])
  })

  it('Codex: [mcp_servers.svc] runs `svc mcp` and passes on the variables it needs; Codex itself reads it so', async () => {
    const c = ctx('codex')
    mkdirSync(join(c.home, '.codex'))
    writeFileSync(join(c.home, '.codex', 'config.toml'), '[mcp_servers.mine]\ncommand = "other-mcp"\n')
    await codex.prepare(c)
    await codex.prepare(c)
    const toml = readFileSync(join(c.home, '.codex', 'config.toml'), 'utf8')
    expect(toml.match(/\[mcp_servers\.svc\]/g)).toHaveLength(1)
    const bin = join(process.cwd(), 'node_modules', '.bin', 'codex')
    const get = (name: string) => JSON.parse(execFileSync(bin, ['mcp', 'get', name, '--json'], {env: {...process.env, CODEX_HOME: join(c.home, '.codex')}, encoding: 'utf8'}))
    expect(get('svc').transport).toMatchObject({type: 'stdio', command: 'svc', args: ['mcp'], env_vars: ['SVC_HUB_ENDPOINT', 'SVC_AUTH_TOKEN', 'SVC_AUTH_TOKEN_FILE', 'SVC_AGENT_ID', 'SVC_PROJECT_ID']})
    expect(get('mine').transport).toMatchObject({command: 'other-mcp'})
  })

  it('Gemini CLI: ~/.gemini/settings.json mcpServers.svc runs `svc mcp`, trusted; the user\'s server stays', async () => {
    const c = ctx('gemini')
    mkdirSync(join(c.home, '.gemini'))
    writeFileSync(join(c.home, '.gemini', 'settings.json'), JSON.stringify({mcpServers: {mine: USER_SERVER}}))
    await gemini.prepare(c)
    await gemini.prepare(c)
    expect(readJson(join(c.home, '.gemini', 'settings.json')).mcpServers).toEqual({mine: USER_SERVER, svc: {command: 'svc', args: ['mcp'], trust: true}})
  })

  it("OpenCode: opencode.json mcp.svc is a local server running `svc mcp`; the user's stays", async () => {
    const c = ctx('opencode')
    const dir = join(c.home, '.config', 'opencode')
    mkdirSync(dir, {recursive: true})
    const mine = {type: 'local', command: ['other-mcp'], enabled: true}
    writeFileSync(join(dir, 'opencode.json'), JSON.stringify({mcp: {mine}}))
    await opencode.prepare(c)
    await opencode.prepare(c)
    expect(readJson(join(dir, 'opencode.json')).mcp).toEqual({mine, svc: {type: 'local', command: ['svc', 'mcp'], enabled: true}})
  })
})
