import {readFileSync} from 'node:fs'
import {createServer, request} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {cliEnv, runCli} from '../helpers/cli.js'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'
import {createUser} from '../helpers/users.js'

/** `svc settings` and `svc admin` (maintenance, profiling, user role) against a live workstation Hub (dev credential). */
describeEachDialect('cli: settings and admin', (dialect) => {
  let hub: LiveHub
  let env: NodeJS.ProcessEnv
  beforeAll(async () => {
    hub = await startLiveHub(dialect, {broker: false, files: {'.svc/settings.yaml': 'schema_version: "1"  # mine\nquotas:\n  max_agents_per_project: 7\n'}})
    env = cliEnv(hub.home, {SVC_HUB_ENDPOINT: hub.url})
  }, 60_000)
  afterAll(async () => {
    await hub?.dispose()
  })
  const svc = (...args: string[]) => runCli(args, {env})

  it('settings get [key]; set sends changed fields with revisions; reset', async () => {
    const all = await svc('settings', 'get', '--json')
    expect(all.code).toBe(0)
    expect(all.json).toMatchObject({mode: 'workstation', layer0_editable: true, quotas: {max_agents_per_project: 7}})
    expect((await svc('settings', 'get', 'quotas.max_agents_per_project')).stdout.trim()).toBe('7')
    const set = await svc('settings', 'set', 'quotas.max_agents_per_project=3', 'default_timezone=Europe/Paris', 'server.log_level=info', '--json')
    expect(set.code, set.stderr + set.stdout).toBe(0)
    expect(set.json.applied.sort()).toEqual(['agent_defaults', 'quotas'])
    // server.log_level=info is the current value: not sent, the file is untouched.
    expect(set.json.file_keys).toEqual([])
    expect(readFileSync(join(hub.home, '.svc/settings.yaml'), 'utf8')).toContain('# mine')
    expect((await svc('settings', 'get', 'sections.quotas', '--json')).json).toMatchObject({origin: 'managed', revision: 2})
    const bad = await svc('settings', 'set', 'default_timezone=Local', '--json')
    expect(bad.code).toBe(1)
    expect(bad.json.error.code).toBe('invalid_timezone')
    expect((await svc('settings', 'set', 'nonsense', '--json')).code).toBe(2)
    const reset = await svc('settings', 'reset', 'quotas', '--json')
    expect(reset.json).toMatchObject({section: 'quotas', deleted: true})
    expect((await svc('settings', 'get', 'quotas.max_agents_per_project')).stdout.trim()).toBe('7')
  }, 180_000)

  it('settings set sends only the changed fields, with the revisions of their sections as read', async () => {
    // A recording proxy in front of the Hub: what the CLI sends, exactly.
    const seen: Array<{method: string; url: string; body: string}> = []
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c) => chunks.push(c))
      req.on('end', () => {
        const body = Buffer.concat(chunks)
        seen.push({method: req.method!, url: req.url!, body: body.toString()})
        const target = new URL(req.url!, hub.url)
        const up = request(target, {method: req.method, headers: {...req.headers, host: target.host}}, (r) => {
          res.writeHead(r.statusCode!, r.headers)
          r.pipe(res)
        })
        up.end(body)
      })
    })
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))
    try {
      const port = (proxy.address() as AddressInfo).port
      const before = (await hub.request('GET', '/api/v1/admin/server-config')).body
      const r = await runCli(['settings', 'set', 'quotas.max_agents_per_broker=11', `quotas.max_agents_per_project=${before.quotas.max_agents_per_project}`, 'default_model=m-2', '--json'], {env: {...env, SVC_HUB_ENDPOINT: `http://127.0.0.1:${port}`}})
      expect(r.code, r.stderr + r.stdout).toBe(0)
      const put = seen.filter((x) => x.method === 'PUT')
      expect(put).toHaveLength(1)
      // The unchanged max_agents_per_project is not sent; each changed section carries the revision GET showed.
      expect(JSON.parse(put[0].body)).toEqual({quotas: {max_agents_per_broker: 11}, default_model: 'm-2', revisions: {quotas: before.sections.quotas.revision, agent_defaults: before.sections.agent_defaults.revision}})
    } finally {
      await new Promise((r) => proxy.close(r))
    }
  }, 180_000)

  it('settings set twice on a map keeps both entries (issue 30: saving one harness config deleted the others); null removes only its entry', async () => {
    const get = async (key: string) => {
      const r = await svc('settings', 'get', key, '--json')
      expect(r.code, r.stderr).toBe(0)
      return r.json
    }
    const first = await svc('settings', 'set', 'harness_configs.claude.env.ANTHROPIC_BASE_URL=http://127.0.0.1:4010')
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toMatch(/^harness_configs: saved \(revision \d+\)$/m)
    const second = await svc('settings', 'set', 'harness_configs.broken.harness=claude', 'harness_configs.broken.env.ANTHROPIC_BASE_URL=http://127.0.0.1:9')
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout).toMatch(/^harness_configs: saved/m)
    expect(await get('harness_configs')).toEqual({
      claude: {env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010'}},
      broken: {harness: 'claude', env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:9'}},
    })
    // A nested field merges into its entry; saving claude again keeps broken.
    expect((await svc('settings', 'set', 'harness_configs.claude.env.EXTRA=1')).code).toBe(0)
    expect(await get('harness_configs.claude')).toEqual({env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010', EXTRA: '1'}})
    expect(await get('harness_configs.broken.harness')).toBe('claude')
    // The same for runtimes and profiles.
    for (const [a, b] of [['runtimes.one.type=local', 'runtimes.two.type=podman'], ['profiles.desk.runtime=one', 'profiles.lab.runtime=two']]) {
      expect((await svc('settings', 'set', a)).code).toBe(0)
      expect((await svc('settings', 'set', b)).code).toBe(0)
    }
    expect(await get('runtimes')).toEqual({one: {type: 'local'}, two: {type: 'podman'}})
    expect(await get('profiles')).toEqual({desk: {runtime: 'one'}, lab: {runtime: 'two'}})
    // null removes only that entry.
    expect((await svc('settings', 'set', 'harness_configs.broken=null')).code).toBe(0)
    expect(await get('harness_configs')).toEqual({claude: {env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010', EXTRA: '1'}}})
  }, 180_000)

  it('admin maintenance status|on|off and admin profiling get|set', async () => {
    expect((await svc('admin', 'maintenance', 'status', '--json')).json).toMatchObject({enabled: false})
    const on = await svc('admin', 'maintenance', 'on', '--message', 'back soon', '--json')
    expect(on.json).toMatchObject({enabled: true, message: 'back soon'})
    expect((await svc('admin', 'maintenance')).stdout).toMatch(/Maintenance:\s+on/)
    expect((await svc('admin', 'maintenance', 'off', '--json')).json).toMatchObject({enabled: false})
    expect((await svc('admin', 'profiling', 'get', '--json')).json).toEqual({readiness_marks: false, revision: 0})
    expect((await svc('admin', 'profiling', 'set', 'true', '--json')).json).toEqual({readiness_marks: true, revision: 1})
    expect((await svc('admin', 'profiling', 'set', 'reset', '--json')).json).toEqual({readiness_marks: false, revision: 0})
    expect((await svc('admin', 'profiling', 'set', 'maybe', '--json')).code).toBe(2)
  }, 180_000)

  it('admin user role sets a Hub role by e-mail or ID and clears it with none; an unknown role or user is exit 1', async () => {
    const carol = await createUser(hub, {email: 'carol-cli@example.test'})
    const set = await svc('admin', 'user', 'role', 'Carol-CLI@example.test', 'template_admin', '--json')
    expect(set.code, set.stderr).toBe(0)
    expect(set.json.user).toMatchObject({id: carol.user.id, hubRole: 'template_admin'})
    // The role is real: the user's own admin status now lists its permissions.
    expect((await hub.request('GET', '/api/v1/admin/status', {token: carol.token})).body.permissions).toEqual(['admin.status.read', 'admin.templates.manage'])
    expect((await svc('admin', 'user', 'role', carol.user.id, 'none')).stdout).toMatch(/Hub role:\s+none/)
    expect((await hub.store.users.get(carol.user.id))!.hubRole).toBe(null)
    const unknown = await svc('admin', 'user', 'role', carol.user.id, 'root', '--json')
    expect(unknown.code).toBe(1)
    expect(unknown.json.error.code).toBe('validation_error')
    const nobody = await svc('admin', 'user', 'role', 'nobody@example.test', 'template_admin', '--json')
    expect(nobody.code).toBe(1)
    expect(nobody.json.error.code).toBe('not_found')
  }, 180_000)
})
