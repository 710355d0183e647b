import {execFileSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {typedInto} from '../helpers/agent-shell.js'

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, {cwd, encoding: 'utf8'}).trim()

/**
 * The sandbox through `agent create`: a shell agent of a project with a checkout, in its own
 * worktree, driven only by keys; what it prints is read from its logs. The Hub's HOME holds the
 * dev token; the Hub's environment holds a variable of its own.
 */
describeEachDialect('the local sandbox through agent create', (dialect) => {
  let hub: LiveHub
  let checkout: string
  let projectId: string
  const SECRET = 'only-the-hub-has-this-3c9d'
  const SETTINGS = `schema_version: "1"
harness_configs:
  named-like-the-launcher:
    harness: shell
    env:
      svc_fw: agent-fw
      svc_on: agent-on
      svc_i: agent-i
      svc_niced: agent-niced
`

  beforeAll(async () => {
    // A harness config whose variables share the sandbox launcher's own shell variables' names.
    hub = await startLiveHub(dialect, {env: {HUB_ONLY_VARIABLE: SECRET}, files: {'.svc/settings.yaml': SETTINGS}})
    checkout = mkdtempSync(join(tmpdir(), 'svc-sbx-checkout-'))
    git(checkout, 'init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# sandboxed\n')
    git(checkout, 'add', '.')
    git(checkout, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first')
    projectId = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'sbx', localPath: checkout}})).body.project.id
  })
  afterAll(async () => {
    await hub?.dispose()
    if (checkout) rmSync(checkout, {recursive: true, force: true})
  })

  const create = async (name: string) => (await hub.request('POST', '/api/v1/agents', {body: {name, projectId, harnessConfig: 'shell'}})).body.agent
  const logs = async (id: string) => String((await hub.request('GET', `/api/v1/agents/${id}/logs`)).body)
  const typed = (id: string, line: string, marker: string) => typedInto(hub, id, line, marker)

  it('an agent sees neither the dev token, nor another agent\'s work tree, nor the Hub\'s environment; it commits in its own repository', async () => {
    const other = await create('other')
    const me = await create('me')
    expect(me).toMatchObject({phase: 'running', runtime: 'local', sandbox: 'bubblewrap'})
    expect(me.workspace.path).not.toBe(other.workspace.path)
    writeFileSync(join(other.workspace.path, 'private.txt'), 'not for me\n')
    await waitFor(async () => (await hub.request('POST', `/api/v1/agents/${me.id}/keys`, {body: {keys: 'true\r'}})).status === 200, 20_000, 'the terminal')

    expect(await typed(me.id, `cat ${join(hub.home, '.svc', 'dev-token')}; echo "token-rc=$?"`, 'token-rc')).not.toBe('0')
    expect(await typed(me.id, `cat ${join(other.workspace.path, 'private.txt')}; echo "other-rc=$?"`, 'other-rc')).not.toBe('0')
    expect(await typed(me.id, 'echo "hubvar=[$HUB_ONLY_VARIABLE]"', 'hubvar')).toBe('[]')
    expect(await typed(me.id, 'echo "whoami=$SVC_AGENT_NAME"', 'whoami')).toBe('me')
    expect(await typed(me.id, 'echo ok > mine.txt && git add mine.txt && git -c user.name=a -c user.email=a@example.com commit -qm by-the-agent; echo "commit-rc=$?"', 'commit-rc')).toBe('0')
    // In its own repository; the checkout gets the branch only by a merge or a delete.
    expect(git(me.workspace.path, 'log', '-1', '--format=%s', 'svc/me')).toBe('by-the-agent')
    expect(() => git(checkout, 'rev-parse', '--verify', '-q', 'refs/heads/svc/me')).toThrow()
    expect(await typed(me.id, `touch ${join(checkout, '.git', 'hooks', 'pre-commit')}; echo "hook-rc=$?"`, 'hook-rc')).not.toBe('0')
    const all = await logs(me.id)
    expect(all).not.toContain(readFileSync(join(hub.home, '.svc', 'dev-token'), 'utf8').trim())
    expect(all).not.toContain(SECRET)
    expect(all).not.toContain('not for me')
  }, 120_000)

  it("its variables that share names with the sandbox launcher's own (forwarders, nice) reach it as its config set them", async () => {
    const a = (await hub.request('POST', '/api/v1/agents', {body: {name: 'namesake', projectId, harnessConfig: 'named-like-the-launcher'}})).body.agent
    expect(a).toMatchObject({phase: 'running', sandbox: 'bubblewrap'})
    await waitFor(async () => (await hub.request('POST', `/api/v1/agents/${a.id}/keys`, {body: {keys: 'true\r'}})).status === 200, 20_000, 'the terminal')
    expect(await typed(a.id, 'echo "launcher-vars=[$svc_fw|$svc_on|$svc_i|$svc_niced]"', 'launcher-vars')).toBe('[agent-fw|agent-on|agent-i|agent-niced]')
  })
})
