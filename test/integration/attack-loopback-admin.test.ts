import {execFileSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'

/**
 * Attack class 3 of issue 26, "admin from loopback": an agent shares the host's network, so
 * anything the Hub grants for coming from loopback with same-origin headers, the agent gets.
 * The attack runs from inside a real sandboxed `shell` agent (local runtime, bubblewrap): curl
 * with forged Host, Origin, Sec-Fetch-Site and Referer against the old dev-session route, the
 * sign-in link route and the link page. The control shows the agent's commands run and reach the
 * Hub (its health answer, and its own token recognised as an agent).
 */
const ATTACK = (direct: string) => `#!/bin/sh
# The agent's own credential, from its environment or the file the runtime names.
TOKEN="\${SVC_AUTH_TOKEN:-$(cat "$SVC_AUTH_TOKEN_FILE" 2>/dev/null)}"
via=ENDPOINT
for H in "$SVC_HUB_ENDPOINT" "${direct}"; do
  HP="\${H#http://}"; HP="\${HP%%/*}"
  probe() {
    name="$1"; url="$2"; shift 2
    hdr=$(curl -s -m 10 -o /dev/null -D - -H "Host: $HP" -H "Origin: http://$HP" -H "Referer: http://$HP/" -H "Sec-Fetch-Site: same-origin" -H "Sec-Fetch-Mode: navigate" "$@" "$url" | tr -d '\\r')
    code=$(printf '%s\\n' "$hdr" | head -n 1 | cut -d ' ' -f 2)
    cookies=$(printf '%s\\n' "$hdr" | grep -ci '^set-cookie: *svc_session=[^;]')
    echo "ATK_\${via}_\${name}=\${code:-none}/\${cookies}"
  }
  probe DEVPOST "$H/api/v1/auth/dev-session" -X POST -H 'content-type: application/json' --data '{}'
  probe DEVGET "$H/api/v1/auth/dev-session"
  probe LINKANON "$H/api/v1/auth/web-sign-in" -X POST -H 'content-type: application/json' --data '{}'
  probe LINKAGENT "$H/api/v1/auth/web-sign-in" -X POST -H 'content-type: application/json' -H "Authorization: Bearer $TOKEN" --data '{"path":"/#/settings"}'
  probe PAGENONE "$H/auth/web"
  probe PAGEGUESS "$H/auth/web?token=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
  probe ADMIN "$H/api/v1/admin/status"
  via=DIRECT
done
echo "CTL_HEALTH=$(curl -s -m 10 "$SVC_HUB_ENDPOINT/healthz" | tr -d ' \\n')"
echo "CTL_ME=$(curl -s -m 10 -H "Authorization: Bearer $TOKEN" "$SVC_HUB_ENDPOINT/api/v1/auth/me" | grep -c '"kind":"agent"')"
echo "CTL_ENDPOINT=$SVC_HUB_ENDPOINT"
echo "ATK_DONE=yes"
`

describeEachDialect('attack: admin from loopback, from inside a sandboxed agent', (dialect) => {
  let hub: LiveHub
  let checkout: string
  let projectId: string
  beforeAll(async () => {
    hub = await startLiveHub(dialect)
    checkout = mkdtempSync(join(tmpdir(), 'svc-atk3-checkout-'))
    const git = (...args: string[]) => execFileSync('git', args, {cwd: checkout})
    git('init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# attacked\n')
    git('add', '.')
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first')
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'atk3', localPath: checkout}})).body.project.id
  })
  afterAll(async () => {
    await hub?.dispose()
    if (checkout) rmSync(checkout, {recursive: true, force: true})
  })

  it('forged same-origin requests get no session, no link and no admin; the agent does reach the Hub', async () => {
    const created = await hub.request('POST', '/api/v1/agents', {body: {name: 'intruder', projectId, harnessConfig: 'shell'}})
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const agent = created.body.agent
    expect(agent).toMatchObject({phase: 'running', runtime: 'local', sandbox: 'bubblewrap'})
    writeFileSync(join(agent.workspace.path, 'attack.sh'), ATTACK(hub.url))
    const logs = async () => String((await hub.request('GET', `/api/v1/agents/${agent.id}/logs`)).body)
    await waitFor(async () => (await hub.request('POST', `/api/v1/agents/${agent.id}/keys`, {body: {keys: 'true\r'}})).status === 200, 20_000, 'the terminal')
    expect((await hub.request('POST', `/api/v1/agents/${agent.id}/keys`, {body: {keys: 'sh attack.sh\r'}})).status).toBe(200)
    const out = await waitFor(async () => {
      const text = await logs()
      return /ATK_DONE=yes/.test(text) ? text : null
    }, 90_000, 'the attack script to finish')
    const value = (key: string) => new RegExp(`${key}=(\\S*)`).exec(out)?.[1] ?? null

    // Control: the agent's commands ran in its sandbox and reached the Hub.
    expect(value('CTL_HEALTH')).toBe('{"status":"ok"}')
    expect(value('CTL_ME')).toBe('1')

    // Through the endpoint the agent is given: every route refuses, and no cookie is set. When
    // that endpoint is the Hub itself, the answers are the Hub's own; behind an egress proxy, the
    // proxy may refuse first.
    const answers = {
      devPost: value('ATK_ENDPOINT_DEVPOST'),
      devGet: value('ATK_ENDPOINT_DEVGET'),
      linkAnon: value('ATK_ENDPOINT_LINKANON'),
      linkAgent: value('ATK_ENDPOINT_LINKAGENT'),
      pageNone: value('ATK_ENDPOINT_PAGENONE'),
      pageGuess: value('ATK_ENDPOINT_PAGEGUESS'),
      admin: value('ATK_ENDPOINT_ADMIN'),
    }
    if (value('CTL_ENDPOINT') === hub.url) {
      expect(answers).toEqual({devPost: '404/0', devGet: '404/0', linkAnon: '401/0', linkAgent: '403/0', pageNone: '401/0', pageGuess: '401/0', admin: '401/0'})
    } else {
      for (const [name, v] of Object.entries(answers)) expect(v, name).toMatch(/^(4\d\d|none)\/0$/)
    }
    // Straight at the Hub's loopback port: refused the same way, or not reachable at all.
    for (const name of ['DEVPOST', 'DEVGET', 'LINKANON', 'LINKAGENT', 'PAGENONE', 'PAGEGUESS', 'ADMIN']) {
      const v = value(`ATK_DIRECT_${name}`)
      expect(v, name).toMatch(/^(404|401|403|none)\/0$/)
    }
  }, 180_000)
})
