import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, expect, it} from 'vitest'
import {describeEachDialect, startTestHub, type TestHub} from '../helpers/hub.js'
import {createUser} from '../helpers/users.js'

/** `{a: {b: v}}` from ['a', 'b'] and v: a body keyed like the settings file. */
const nest = (path: readonly string[], value: unknown): Record<string, unknown> => path.reduceRight<unknown>((v, seg) => ({[seg]: v}), value) as Record<string, unknown>
const at = (tree: unknown, path: readonly string[]): any => path.reduce<any>((cur, seg) => (cur && typeof cur === 'object' ? cur[seg] : undefined), tree)

/**
 * Every map-valued place a server-config body can reach: `map` is the path of the map, `section`
 * its Layer-1 section, `a` and `b` two entries (name, value), `deep` a nested field of entry a
 * sent on its own (path below the entry, value), which must keep what entry a already had.
 */
const MAPS = [
  {section: 'harness_configs', map: ['harness_configs'], a: ['claude', {harness: 'claude', env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010'}}], b: ['broken', {harness: 'claude', env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:9'}}], deep: [['env', 'EXTRA'], 'y']},
  {section: 'runtimes', map: ['runtimes'], a: ['tmuxed', {type: 'local', env: {A: '1'}}], b: ['pod', {type: 'podman'}], deep: [['env', 'B'], '2']},
  {section: 'profiles', map: ['profiles'], a: ['desk', {runtime: 'tmuxed', env: {P: '1'}}], b: ['lab', {runtime: 'pod'}], deep: [['harness_overrides', 'claude', 'model'], 'opus']},
  {section: 'telemetry', map: ['telemetry', 'cloud', 'headers'], a: ['x-team', 'core'], b: ['x-env', 'dev'], deep: null},
  {section: 'telemetry', map: ['telemetry', 'resource'], a: ['service.name', 'svc'], b: ['deployment.environment', 'test'], deep: null},
  {section: 'telemetry', map: ['telemetry', 'filter', 'sampling', 'rates'], a: ['agent.tool', 0.5], b: ['agent.turn', 0.25], deep: null},
  {section: 'agent_defaults', map: ['default_resources'], a: ['cpu', '2'], b: ['memory', '4Gi'], deep: null},
  {section: 'federation', map: ['server', 'federation', 'issuers'], a: ['ci', {audience: 'svc', subjects: ['repo:a']}], b: ['gh', {audience: 'svc'}], deep: [['claims', 'org'], 'acme']},
] as const

/**
 * A PUT server-config body carries only changed fields: a map is merged entry by entry, all the
 * way down; only null removes an entry; lists are replaced whole; a stale revision is 409 and
 * changes nothing (issue 30, item 1: saving one harness config deleted the others).
 */
describeEachDialect('settings: map sections merge key by key', (dialect) => {
  let hub: TestHub | undefined
  afterEach(async () => {
    await hub?.dispose()
    hub = undefined
  })

  for (const hosted of [false, true]) for (const m of MAPS) {
    it(`${hosted ? 'hosted' : 'workstation'} ${m.map.join('.')}: save A, save B, both kept; nested fields merge; null removes only its entry; a stale revision is 409 and changes nothing`, async () => {
      hub = await startTestHub(dialect, hosted ? {flags: {hosted: true}} : {})
      const token = hosted ? (await createUser(hub, {systemAdmin: true})).token : undefined
      const get = async () => (await hub!.request('GET', '/api/v1/admin/server-config', {token})).body
      const put = async (body: unknown) => {
        const r = await hub!.request('PUT', '/api/v1/admin/server-config', {token, body})
        expect(r.status, JSON.stringify(r.body)).toBe(200)
        return r.body
      }
      {
        const label = m.map.join('.')
        const [aName, aValue] = m.a
        const [bName, bValue] = m.b
        await put(nest([...m.map, aName], aValue))
        await put(nest([...m.map, bName], bValue))
        let got = await get()
        expect(at(got, [...m.map, aName]), `${label}: A kept after saving B`).toEqual(aValue)
        expect(at(got, [...m.map, bName]), `${label}: B saved`).toEqual(bValue)

        // Saving A again (changed) keeps B.
        if (m.deep) {
          const [below, v] = m.deep
          await put(nest([...m.map, aName, ...below], v))
          got = await get()
          const want = structuredClone(aValue) as Record<string, any>
          let cur = want
          for (const seg of below.slice(0, -1)) cur = cur[seg] ??= {}
          cur[below[below.length - 1]] = v
          expect(at(got, [...m.map, aName]), `${label}: nested field merged into A`).toEqual(want)
          expect(at(got, [...m.map, bName]), `${label}: B kept after a nested save of A`).toEqual(bValue)
        }
        const aNow = at(got, [...m.map, aName])

        // A concurrent save holding the revision read before another save: 409, nothing written.
        const rev = got.sections[m.section].revision
        await put({...nest([...m.map, bName], null), revisions: {[m.section]: rev}})
        const stale = await hub!.request('PUT', '/api/v1/admin/server-config', {token, body: {...nest([...m.map, 'late'], aValue), revisions: {[m.section]: rev}}})
        expect(stale.status, label).toBe(409)
        expect(stale.body.error.code).toBe('revision_conflict')
        got = await get()
        // Null removed only B; the refused save added nothing.
        expect(at(got, [...m.map, bName]), `${label}: null removed B`).toBeUndefined()
        expect(at(got, [...m.map, 'late']), `${label}: the stale save wrote nothing`).toBeUndefined()
        expect(at(got, [...m.map, aName]), `${label}: null on B kept A`).toEqual(aNow)
        expect(got.sections[m.section].revision).toBe(rev + 1)
      }
    })
  }

  it('the issue\'s case: `broken` saved beside `claude` keeps claude\'s ANTHROPIC_BASE_URL, and saving claude again keeps broken; lists are replaced whole', async () => {
    hub = await startTestHub(dialect)
    const put = (body: unknown) => hub!.request('PUT', '/api/v1/admin/server-config', {body})
    const get = async () => (await hub!.request('GET', '/api/v1/admin/server-config')).body
    expect((await put({harness_configs: {claude: {env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010'}, args: ['--a', '--b']}}})).status).toBe(200)
    expect((await put({harness_configs: {broken: {harness: 'claude', env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:9'}}}})).status).toBe(200)
    expect((await get()).harness_configs).toEqual({
      claude: {env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010'}, args: ['--a', '--b']},
      broken: {harness: 'claude', env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:9'}},
    })
    // A list is a value: the new one replaces the old one whole.
    expect((await put({harness_configs: {claude: {args: ['--c']}}})).status).toBe(200)
    expect((await get()).harness_configs.claude).toEqual({env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010'}, args: ['--c']})
    // The effective settings the Hub applies (not only the view) hold both.
    expect(Object.keys(hub.services.settings!.resolved().harness_configs as object).sort()).toEqual(['broken', 'claude'])
    // Echoing GET's body writes nothing.
    const rev = (await get()).sections.harness_configs.revision
    const echo = await put(await get())
    expect(echo.status).toBe(200)
    expect((await get()).sections.harness_configs.revision).toBe(rev)
    // Null on the whole map clears it.
    expect((await put({harness_configs: null})).status).toBe(200)
    expect((await get()).harness_configs ?? null).toBeNull()
  })

  it('the loopback runtime route merges too: a second runtime keeps the first', async () => {
    hub = await startTestHub(dialect)
    expect((await hub.request('PUT', '/api/v1/system/runtime', {body: {runtimes: {one: {type: 'local'}}}})).status).toBe(200)
    expect((await hub.request('PUT', '/api/v1/system/runtime', {body: {runtimes: {two: {type: 'podman'}}}})).status).toBe(200)
    expect((await hub.request('GET', '/api/v1/admin/server-config')).body.runtimes).toEqual({one: {type: 'local'}, two: {type: 'podman'}})
  })

  it('workstation settings file: a map under a file key merges in place, comments kept; null removes only its entry', async () => {
    const text = 'schema_version: "1"  # mine\nserver:\n  hub:\n    # cors of the API\n    cors:\n      enabled: true\n      headers:\n        A: "1"  # first\n'
    hub = await startTestHub(dialect, {files: {'.svc/settings.yaml': text}})
    const file = () => readFileSync(join(hub!.home, '.svc/settings.yaml'), 'utf8')
    const put = (body: unknown) => hub!.request('PUT', '/api/v1/admin/server-config', {body})
    const r = await put({server: {hub: {cors: {headers: {B: '2'}}}}})
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(file()).toBe(text + '        B: "2"\n')
    expect((await put({server: {hub: {cors: {headers: {A: null}}}}})).status).toBe(200)
    expect(file()).toBe('schema_version: "1"  # mine\nserver:\n  hub:\n    # cors of the API\n    cors:\n      enabled: true\n      headers:\n        B: "2"\n')
  })
})
