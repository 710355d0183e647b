import {describe, expect, it} from 'vitest'
import {claudeSettings} from './claude-config.js'
import {CLAUDE_HTTP_HOOK_EVENTS, claudeHookUrl, claudeHttpHookSettings} from './claude-http-hooks.js'

const env = {SVC_HUB_ENDPOINT: 'http://127.0.0.1:9810', SVC_AGENT_ID: 'a-1', SVC_AUTH_TOKEN: 'svc_agt_x'}
const hookCommand = ['/opt/svc/bin/svc', 'hook', 'claude']
const kinds = (settings: Record<string, any>, event: string) => (settings.hooks[event] ?? []).flatMap((g: any) => g.hooks.map((h: any) => h.type))

describe('Claude Code HTTP hooks', () => {
  it('a loopback Hub gets the tool-call events over HTTP with the agent token from the environment; the other events stay commands', () => {
    const s = claudeHttpHookSettings(claudeSettings({}, hookCommand), env)
    for (const event of CLAUDE_HTTP_HOOK_EVENTS) {
      expect(s.hooks[event]).toEqual([
        {matcher: '', hooks: [{type: 'http', url: 'http://127.0.0.1:9810/api/v1/agents/a-1/hooks/claude', headers: {Authorization: 'Bearer $SVC_AUTH_TOKEN'}, allowedEnvVars: ['SVC_AUTH_TOKEN'], timeout: 10}]},
      ])
    }
    for (const event of ['UserPromptSubmit', 'Stop', 'StopFailure', 'Notification', 'PermissionRequest']) expect(kinds(s, event)).toEqual(['command'])
    // The token itself is never written into the file: Claude Code reads it from its environment.
    expect(JSON.stringify(s)).not.toContain('svc_agt_x')
  })

  it('only towards loopback: a Hub elsewhere (Claude Code refuses private addresses), no agent or no token keeps every event a command', () => {
    for (const e of [{...env, SVC_HUB_ENDPOINT: 'http://10.0.0.5:9810'}, {...env, SVC_HUB_ENDPOINT: 'https://hub.example.com'}, {...env, SVC_AGENT_ID: undefined}, {...env, SVC_AUTH_TOKEN: undefined}, {...env, SVC_HUB_ENDPOINT: 'not a url'}]) {
      expect(claudeHookUrl(e)).toBeNull()
      const s = claudeHttpHookSettings(claudeSettings({}, hookCommand), e)
      for (const event of CLAUDE_HTTP_HOOK_EVENTS) expect(kinds(s, event)).toEqual(['command'])
    }
    expect(claudeHookUrl({...env, SVC_HUB_ENDPOINT: 'http://localhost:8080'})).toBe('http://localhost:8080/api/v1/agents/a-1/hooks/claude')
    expect(claudeHookUrl({...env, SVC_HUB_ENDPOINT: 'http://[::1]:8080'})).toBe('http://[::1]:8080/api/v1/agents/a-1/hooks/claude')
  })

  it('every start replaces svc\'s hooks (no duplicates, an old Hub address dropped) and keeps the user\'s own', () => {
    const user = {matcher: 'Bash', hooks: [{type: 'http', url: 'http://127.0.0.1:7000/mine'}, {type: 'command', command: 'echo hi'}]}
    let s: Record<string, any> = {hooks: {PreToolUse: [user]}, allowedHttpHookUrls: ['http://127.0.0.1:7000/*']}
    s = claudeHttpHookSettings(claudeSettings(s, hookCommand), {...env, SVC_HUB_ENDPOINT: 'http://127.0.0.1:1111'})
    s = claudeHttpHookSettings(claudeSettings(s, hookCommand), env)
    s = claudeHttpHookSettings(claudeSettings(s, hookCommand), env)
    expect(s.hooks.PreToolUse).toEqual([user, {matcher: '', hooks: [expect.objectContaining({type: 'http', url: 'http://127.0.0.1:9810/api/v1/agents/a-1/hooks/claude'})]}])
    expect(kinds(s, 'Stop')).toEqual(['command'])
    // A settings file restricting HTTP hook URLs lets the Hub's through (once), the user's kept.
    expect(s.allowedHttpHookUrls).toEqual(['http://127.0.0.1:7000/*', 'http://127.0.0.1:9810/api/v1/agents/a-1/hooks/claude'])
    // Moved to a Hub elsewhere: svc's HTTP hooks go, its command hooks come back.
    s = claudeHttpHookSettings(claudeSettings(s, hookCommand), {...env, SVC_HUB_ENDPOINT: 'https://hub.example.com'})
    expect(s.hooks.PreToolUse).toEqual([user, {matcher: '', hooks: [expect.objectContaining({type: 'command', command: '/opt/svc/bin/svc hook claude PreToolUse'})]}])
  })
})
