import {execFileSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {typedInto} from '../helpers/agent-shell.js'

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, {cwd, encoding: 'utf8'}).trim()

const SECRET = 'its-api-key-9f2c71d04be3'
const MASK = '********'
// Agent B's harness config is given the project secret ITS_API_KEY.
const SETTINGS = `schema_version: "1"
harness_configs:
  keyed-shell:
    harness: shell
    secrets:
      - key: ITS_API_KEY
`

/**
 * Attack (issue 26, class 6 "secrets between agents"): two `shell` agents of one project on the
 * local runtime (bubblewrap); B's harness was given the project secret ITS_API_KEY. From inside
 * A, with A's own token (a `full` agent), through `svc` and plain HTTP: type `echo $ITS_API_KEY`
 * into B and read B's logs, and attach to B. Every try answers 404 and nothing reaches B's
 * terminal. Controls: A sends keys to and reads the logs of itself from inside; B really holds
 * the value (its own pane shows it on the host); a person reading B's logs sees it masked.
 */
describeEachDialect('attack: an agent reads another agent\'s secret through keys and logs', (dialect) => {
  let hub: LiveHub
  let checkout: string
  let projectId: string

  beforeAll(async () => {
    hub = await startLiveHub(dialect, {files: {'.svc/settings.yaml': SETTINGS}})
    checkout = mkdtempSync(join(tmpdir(), 'svc-secrets-checkout-'))
    git(checkout, 'init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# secrets\n')
    git(checkout, 'add', '.')
    git(checkout, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first')
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'secrets', localPath: checkout}})).body.project.id
    expect((await hub.request('PUT', `/api/v1/projects/${projectId}/secrets/ITS_API_KEY`, {body: {value: SECRET}})).status).toBe(200)
  })
  afterAll(async () => {
    await hub?.dispose()
    if (checkout) rmSync(checkout, {recursive: true, force: true})
  })

  const create = async (name: string, harnessConfig: string) => (await hub.request('POST', '/api/v1/agents', {body: {name, projectId, harnessConfig, role: 'full'}})).body.agent
  const logs = async (id: string) => String((await hub.request('GET', `/api/v1/agents/${id}/logs`)).body)
  const pane = (id: string) => hub.tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', `=svc-${id}:`).stdout
  const typed = (id: string, line: string, marker: string) => typedInto(hub, id, line, marker)

  // Inside A: its own credential and the Hub endpoint it was given.
  const AUTH = `-H "authorization: Bearer \${SVC_AUTH_TOKEN:-$(cat "$SVC_AUTH_TOKEN_FILE")}"`
  const status = (args: string) => `$(curl -s -o /dev/null -w %{http_code} --max-time 10 ${AUTH} ${args})`

  it('from inside A, keys to B and B\'s logs and attach answer 404; B never runs the command; controls pass', async () => {
    const b = await create('b', 'keyed-shell')
    const a = await create('a', 'shell')
    expect(a).toMatchObject({phase: 'running', runtime: 'local', sandbox: 'bubblewrap'})
    expect(b).toMatchObject({phase: 'running', runtime: 'local', sandbox: 'bubblewrap'})
    for (const x of [a, b]) await waitFor(async () => (await hub.request('POST', `/api/v1/agents/${x.id}/keys`, {body: {keys: 'true\r'}})).status === 200, 20_000, 'the terminal')

    // Control: B holds the value (its own terminal, read on the host, shows it).
    await typed(b.id, 'echo "b-has=[$ITS_API_KEY]"', 'b-has')
    await waitFor(() => pane(b.id).includes(`b-has=[${SECRET}]`), 10_000, "the secret in B's pane")

    // Control: from inside, A sends keys to itself and reads its own logs with its token.
    const selfKeys = JSON.stringify({keys: 'echo self-typed-ok\r'})
    expect(await typed(a.id, `echo "self-keys=${status(`-X POST -H 'content-type: application/json' -d '${selfKeys}' "$SVC_HUB_ENDPOINT/api/v1/agents/$SVC_AGENT_ID/keys"`)}"`, 'self-keys')).toBe('200')
    await waitFor(async () => /^self-typed-ok/m.test(await logs(a.id)), 20_000, 'the keys A sent itself ran')
    expect(await typed(a.id, `echo "self-logs=${status('"$SVC_HUB_ENDPOINT/api/v1/agents/$SVC_AGENT_ID/logs"')}"`, 'self-logs')).toBe('200')
    expect(await typed(a.id, `svc keys a 'echo svc-self-ok' >/dev/null 2>&1; echo "svc-self-rc=$?"`, 'svc-self-rc')).toBe('0')

    // The attack: keys that would print B's secret, by HTTP (both routes) and by `svc keys`.
    const steal = JSON.stringify({keys: 'echo "stolen=[$ITS_API_KEY]"\r'})
    expect(await typed(a.id, `echo "keys-top=${status(`-X POST -H 'content-type: application/json' -d '${steal}' "$SVC_HUB_ENDPOINT/api/v1/agents/${b.id}/keys"`)}"`, 'keys-top')).toBe('404')
    expect(await typed(a.id, `echo "keys-scoped=${status(`-X POST -H 'content-type: application/json' -d '${steal}' "$SVC_HUB_ENDPOINT/api/v1/projects/$SVC_PROJECT_ID/agents/b/keys"`)}"`, 'keys-scoped')).toBe('404')
    expect(await typed(a.id, `echo "svc-keys=$(svc keys b 'echo "stolen=[$ITS_API_KEY]"' --json 2>&1 | grep -o '"code": *"[a-z_]*"' | tr -d ' "' | head -1)"`, 'svc-keys')).toBe('code:not_found')
    // B's logs, by HTTP (both routes), by `svc agent logs`, and the follow stream and attach upgrades.
    expect(await typed(a.id, `echo "logs-top=${status(`"$SVC_HUB_ENDPOINT/api/v1/agents/${b.id}/logs"`)}"`, 'logs-top')).toBe('404')
    expect(await typed(a.id, `echo "logs-scoped=${status('"$SVC_HUB_ENDPOINT/api/v1/projects/$SVC_PROJECT_ID/agents/b/logs"')}"`, 'logs-scoped')).toBe('404')
    expect(await typed(a.id, `echo "svc-logs=$(svc agent logs b --json 2>&1 | grep -o '"code": *"[a-z_]*"' | tr -d ' "' | head -1)"`, 'svc-logs')).toBe('code:not_found')
    const upgrade = `-H 'Connection: Upgrade' -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=='`
    expect(await typed(a.id, `echo "follow=${status(`${upgrade} "$SVC_HUB_ENDPOINT/api/v1/agents/${b.id}/logs"`)}"`, 'follow')).toBe('404')
    expect(await typed(a.id, `echo "attach=${status(`${upgrade} "$SVC_HUB_ENDPOINT/api/v1/agents/${b.id}/attach"`)}"`, 'attach')).toBe('404')

    // Nothing reached B: a marker typed after the attack shows, the stolen line never ran.
    await typed(b.id, 'echo "after-attack=1"', 'after-attack')
    expect(pane(b.id)).not.toContain('stolen=')
    // Nowhere in A's output (what A could have read) is the value.
    expect(pane(a.id)).not.toContain(SECRET)

    // Control: a person reading B's logs sees B's output with the secret masked.
    const bLogs = await logs(b.id)
    expect(bLogs).toContain(`b-has=[${MASK}]`)
    expect(bLogs).not.toContain(SECRET)
  }, 180_000)
})
