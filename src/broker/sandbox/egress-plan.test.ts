import {describe, expect, it} from 'vitest'
import {allowedDestinations, egressEnv, egressPlan, harnessOf, forwarderScript, harnessStartsLate, identityFile, parseHostPort} from './egress-plan.js'

describe('what an isolated agent may reach', () => {
  const env = {
    SVC_HUB_ENDPOINT: 'http://127.0.0.1:9810',
    ANTHROPIC_BASE_URL: 'http://localhost:4000/v1',
    OPENAI_BASE_URL: 'https://llm.example.com',
    AZURE_OPENAI_ENDPOINT: 'https://az.example.net:8443/',
    SOME_URL: 'http://127.0.0.1:5432',
    NOT_A_URL_BASE_URL: 'nonsense',
    SVC_AUTH_TOKEN: 'svc_agt_x',
  }

  it('the Hub, every *_BASE_URL and *_ENDPOINT, the harness API hosts and settings; nothing else named in env', () => {
    const got = allowedDestinations({env, command: ['/usr/bin/node', '/opt/lib/node_modules/@openai/codex/bin/codex.js'], extra: ['registry.npmjs.org:443']})
    expect(got.map((d) => `${d.host}:${d.port} ${d.why}`)).toEqual([
      'llm.example.com:443 OPENAI_BASE_URL', // sorted by variable name: ANTHROPIC..., AZURE..., OPENAI..., SVC_HUB...
      'localhost:4000 ANTHROPIC_BASE_URL',
      'az.example.net:8443 AZURE_OPENAI_ENDPOINT',
      '127.0.0.1:9810 SVC_HUB_ENDPOINT',
      'api.openai.com:443 codex API',
      'auth.openai.com:443 codex API',
      'chatgpt.com:443 codex API',
      'registry.npmjs.org:443 egress_allow',
    ].sort((a, b) => order(a) - order(b)))
  })

  it("the endpoints of a JSON configuration held in a variable (OpenCode's provider baseURL)", () => {
    const config = JSON.stringify({provider: {scripted: {options: {baseURL: 'http://127.0.0.1:4100/v1', apiKey: 'k'}}}, share: 'disabled', mcp: {x: {url: 'https://mcp.example.org/sse'}}})
    const got = allowedDestinations({env: {OPENCODE_CONFIG_CONTENT: config, PLAIN: '{not json', OTHER: 'http://127.0.0.1:1'}, command: ['/bin/sh'], extra: []})
    expect(got.map((d) => `${d.host}:${d.port} ${d.why}`)).toEqual(['127.0.0.1:4100 OPENCODE_CONFIG_CONTENT', 'mcp.example.org:443 OPENCODE_CONFIG_CONTENT'])
  })

  it('a shell agent gets only the Hub (no harness API hosts)', () => {
    expect(allowedDestinations({env: {SVC_HUB_ENDPOINT: 'http://127.0.0.1:9810'}, command: ['/bin/bash', '-i'], extra: []})).toEqual([{host: '127.0.0.1', port: 9810, why: 'SVC_HUB_ENDPOINT'}])
  })

  it('knows the harness from its executable or the script node runs', () => {
    expect(harnessOf(['/root/.local/bin/claude'])).toBe('claude')
    expect(harnessOf(['/usr/bin/node', '/x/gemini-cli/dist/gemini.js'])).toBe('gemini')
    expect(harnessOf(['/usr/local/bin/opencode', 'run'])).toBe('opencode')
    expect(harnessOf(['/usr/bin/node', '--no-warnings=DEP0040', '/usr/local/bin/codex', '--yolo'])).toBe('codex')
    expect(harnessOf(['/bin/sh', '-c', 'claude'])).toBeUndefined()
  })

  it('settings entries are host:port', () => {
    expect(parseHostPort('Registry.NPMjs.org:443')).toEqual({host: 'registry.npmjs.org', port: 443})
    expect(parseHostPort('[::1]:8080')).toEqual({host: '::1', port: 8080})
    for (const bad of ['registry.npmjs.org', 'https://x:443', 'x:0', 'x:70000', 'a b:1']) expect(() => parseHostPort(bad)).toThrow(/must be host:port/)
  })
})

// The expected list above is written in the order allowedDestinations produces it.
const order = (line: string) => ['ANTHROPIC_BASE_URL', 'AZURE_OPENAI_ENDPOINT', 'OPENAI_BASE_URL', 'SVC_HUB_ENDPOINT', 'api.openai', 'auth.openai', 'chatgpt', 'egress_allow'].findIndex((k) => line.includes(k))

describe('how it is reached inside', () => {
  const dests = [
    {host: '127.0.0.1', port: 9810, why: 'SVC_HUB_ENDPOINT'},
    {host: 'localhost', port: 4000, why: 'ANTHROPIC_BASE_URL'},
    {host: 'api.anthropic.com', port: 443, why: 'claude API'},
    {host: 'registry.npmjs.org', port: 443, why: 'egress_allow'},
  ]

  it('loopback destinations at the same address and port (localhost at both families), the rest through one proxy', () => {
    const plan = egressPlan(dests, '/s/sb/svc-a/net')
    expect(plan.loopback).toEqual([
      {address: '127.0.0.1', port: 9810, socket: '/s/sb/svc-a/net/l0.sock'},
      {address: '127.0.0.1', port: 4000, socket: '/s/sb/svc-a/net/l1.sock'},
      {address: '::1', port: 4000, socket: '/s/sb/svc-a/net/l2.sock'},
    ])
    expect(plan.proxy).toEqual({address: '127.0.0.1', port: 3128, socket: '/s/sb/svc-a/net/proxy.sock', allow: ['api.anthropic.com:443', 'registry.npmjs.org:443', '127.0.0.1:9810', 'localhost:4000']})
    expect(egressEnv(plan)).toMatchObject({HTTPS_PROXY: 'http://127.0.0.1:3128', http_proxy: 'http://127.0.0.1:3128', NO_PROXY: 'localhost,127.0.0.1,::1'})
  })

  it('no proxy (and no proxy variables) when everything is on loopback; the proxy port avoids a loopback one', () => {
    const only = egressPlan([dests[0]], '/n')
    expect(only.proxy).toBeUndefined()
    expect(egressEnv(only)).toEqual({})
    expect(egressPlan([{host: '127.0.0.1', port: 3128, why: 'x'}, dests[2]], '/n').proxy?.port).toBe(3129)
  })

  it('a loopback port below 1024 is refused, naming the setting', () => {
    expect(() => egressPlan([{host: 'localhost', port: 80, why: 'OPENAI_BASE_URL'}], '/n', 'mine')).toThrow(/OPENAI_BASE_URL names localhost:80: .*runtimes\.mine\.network: host/)
  })

  it('the forwarders: one socat per listener, all in one session of their own, their logs read until each listens', () => {
    const {start, wait} = forwarderScript(egressPlan(dests, '/n'), '/usr/bin/socat')
    expect(start.startsWith('setsid /bin/sh -c ')).toBe(true)
    // Quoted twice: once for the shell running setsid, once for the one it starts.
    expect(start).toContain(`'\\''/usr/bin/socat'\\'' -d -d '\\''TCP4-LISTEN:9810,bind=127.0.0.1,reuseaddr,fork'\\'' '\\''UNIX-CONNECT:/n/l0.sock'\\'' &`)
    expect(start).toContain(`'\\''TCP6-LISTEN:4000,bind=[::1],reuseaddr,fork'\\'' '\\''UNIX-CONNECT:/n/l2.sock'\\''`)
    expect(start).toContain(`'\\''TCP4-LISTEN:3128,bind=127.0.0.1,reuseaddr,fork'\\'' '\\''UNIX-CONNECT:/n/proxy.sock'\\''`)
    // Four listeners (localhost at both families, the Hub, the proxy): done at the fourth `listening on`.
    expect(start).toContain('[ $svc_n -lt 4 ] || exit 0')
    expect(wait).toBe('wait "$svc_fw" || exit 70')
    expect(forwarderScript({loopback: []}, '/usr/bin/socat')).toEqual({start: '', wait: ''})
    // Overlapping the harness: no wait; a failure kills it.
    const overlapped = forwarderScript(egressPlan(dests, '/n'), '/usr/bin/socat', true)
    expect(overlapped.wait).toBe('')
    expect(overlapped.start).toContain('kill -KILL $$')
    expect(start).not.toContain('kill')
  })

  it('only Claude Code run directly starts beside its forwarders', () => {
    expect(harnessStartsLate(['/usr/local/bin/claude', '--resume'], undefined)).toBe(true)
    expect(harnessStartsLate(['claude'], [])).toBe(true)
    expect(harnessStartsLate(['claude'], ['/bin/sh', '-c', 'npm ci; exec "$@"', 'setup'])).toBe(false)
    expect(harnessStartsLate(['codex'], undefined)).toBe(false)
    expect(harnessStartsLate(['/bin/bash', '-i'], undefined)).toBe(false)
  })

  it('the agent uid has a passwd and group entry of its own, replacing a host user of that uid', () => {
    const host = 'root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/bash\n'
    expect(identityFile(host, 1000, 'passwd', '/s/homes/a')).toBe('root:x:0:0:root:/root:/bin/bash\nsvc-agent:x:1000:1000:svc agent:/s/homes/a:/bin/sh\n')
    expect(identityFile('root:x:0:\n', 1000, 'group', '/h')).toBe('root:x:0:\nsvc-agent:x:1000:\n')
  })
})
