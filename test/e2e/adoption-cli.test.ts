import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {DEV_USER} from '../../src/domain/hub-config.js'
import {openStore, type Store} from '../../src/store/store.js'
import {legacyAgents} from '../helpers/adoption.js'
import {cliEnv, freePort, runCli, startServerProcess, type RunningServer} from '../helpers/cli.js'
import {describeEachDialect} from '../helpers/hub.js'
import {createPgSchema} from '../helpers/pg.js'

/**
 * Human output with what differs between runs masked: each distinct ID becomes <idN> in order
 * of appearance, fingerprints and timestamps placeholders. The start-up snapshot and marker lines
 * depend on when the Hub started (not on these commands), so their values are masked too.
 */
function stable(text: string): string {
  const ids = new Map<string, string>()
  return text
    .replace(/[0-9a-f]{64}/g, '<fingerprint>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
      // Padded to the ID's width so the tables stay aligned.
      if (!ids.has(id)) ids.set(id, `<id${ids.size + 1}>`.padEnd(id.length))
      return ids.get(id)!
    })
    .replace(/^((?:Snapshot|Marker):\s+).*$/gm, '$1<masked>')
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
}

/** `svc admin adoption status|preview|commit` against a real `svc server start` process. */
describeEachDialect('cli: admin adoption', (dialect) => {
  let server: RunningServer
  let store: Store
  let env: NodeJS.ProcessEnv
  let home: string
  let drop: (() => Promise<void>) | null = null
  let projectId: string
  let root: string
  let child: string

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'svc-e2e-adoption-'))
    // The co-located broker on a free port, so parallel test files never collide on 9800.
    const db: Record<string, string> = {SVC_SERVER_BROKER_PORT: String(await freePort())}
    if (dialect === 'postgres') {
      const s = await createPgSchema()
      drop = s.drop
      Object.assign(db, {SVC_SERVER_DATABASE_DRIVER: 'postgres', SVC_SERVER_DATABASE_URL: s.url})
    }
    server = await startServerProcess([], cliEnv(home, db))
    env = cliEnv(home, {SVC_HUB_ENDPOINT: server.url})
    // Agents from before provenance, written into the running Hub's database after its start,
    // so they are outside any start-up cohort and adoptable by an admin commit.
    store = await openStore(dialect === 'postgres' ? {driver: 'postgres', url: db.SVC_SERVER_DATABASE_URL} : {driver: 'sqlite', url: join(home, '.svc', 'hub.db')})
    const reg = await runCli(['project', 'register', 'adoption-cli', '--no-remote', '--json'], {env})
    expect(reg.code, reg.stderr + reg.stdout).toBe(0)
    projectId = reg.json.project.id
    ;[root] = await legacyAgents({store}, [{projectId, by: DEV_USER.id, role: 'full'}])
    ;[child] = await legacyAgents({store}, [{projectId, by: {agent: root}, role: 'baseline'}])
  }, 120_000)
  afterAll(async () => {
    await store?.close()
    await server?.stop()
    if (drop) await drop()
    rmSync(home, {recursive: true, force: true})
  })
  const svc = (...args: string[]) => runCli(args, {env, timeoutMs: 60_000})

  it('a preview whose plan writes nothing does not suggest a commit', async () => {
    const reg = await runCli(['project', 'register', 'adoption-cli-empty', '--no-remote', '--json'], {env})
    expect(reg.code, reg.stderr + reg.stdout).toBe(0)
    const pv = await svc('admin', 'adoption', 'preview', '--project', reg.json.project.id)
    expect(pv.code, pv.stderr).toBe(0)
    expect(pv.stdout).toContain('The plan writes nothing: there is nothing to commit.')
    expect(pv.stdout).not.toMatch(/commit it with|Commit it with/)
    const out = join(home, 'empty-plan.json')
    const withOut = await svc('admin', 'adoption', 'preview', '--project', reg.json.project.id, '--out', out)
    expect(withOut.stdout).not.toContain('svc admin adoption commit')
  }, 120_000)

  it('status, preview --out, commit --plan; then a revert by --fingerprint; usage errors exit 2', async () => {
    const st = await svc('admin', 'adoption', 'status', '--project', projectId, '--json')
    expect(st.code, st.stderr).toBe(0)
    expect(st.json).toMatchObject({snapshotTaken: expect.any(Boolean), records: [], total: 0, limit: 100, offset: 0})
    expect(st.json.notInCohort.map((h: {agentId: string}) => h.agentId)).toEqual([root, child])
    const human = await svc('admin', 'adoption', 'status', '--project', projectId)
    expect(stable(human.stdout)).toMatchSnapshot('status before')

    const plan = join(home, 'plan.json')
    const pv = await svc('admin', 'adoption', 'preview', '--project', projectId, '--out', plan)
    expect(pv.code, pv.stderr).toBe(0)
    expect(stable(pv.stdout.replaceAll(plan, 'plan.json'))).toMatchSnapshot('preview adopt')
    const file = JSON.parse(readFileSync(plan, 'utf8'))
    expect(file.request).toEqual({operation: 'adopt', scope: {projectId}})
    expect(file.preview).toMatchObject({operation: 'adopt', counts: {adopt: 2}, coveredRecordIds: [], planFingerprint: expect.stringMatching(/^[0-9a-f]{64}$/)})

    const c = await svc('admin', 'adoption', 'commit', '--plan', plan, '--json')
    expect(c.code, c.stderr + c.stdout).toBe(0)
    expect(c.json).toEqual({planId: file.preview.planId, hops: 2, coveredRecords: 0, recordIds: [expect.any(String), expect.any(String)]})
    // The same plan again is stale: exit 1 with the Hub's code.
    const again = await svc('admin', 'adoption', 'commit', '--plan', plan, '--json')
    expect(again.code).toBe(1)
    expect(again.json.error.code).toBe('stale_authorization_preview')

    const after = await svc('admin', 'adoption', 'status', '--project', projectId, '--status', 'adopted')
    expect(stable(after.stdout)).toMatchSnapshot('status after')

    const [first] = c.json.recordIds as string[]
    const rv = await svc('admin', 'adoption', 'preview', '--revert', first, '--json')
    expect(rv.json).toMatchObject({operation: 'revert', counts: {revert: 1}, hops: [{recordId: first, outcome: 'revert'}]})
    const rc = await svc('admin', 'adoption', 'commit', '--revert', first, '--fingerprint', rv.json.planFingerprint)
    expect(rc.code, rc.stderr).toBe(0)
    expect(stable(rc.stdout)).toMatchSnapshot('commit revert')
    expect((await store.delegationAdoptions.get(first))!.status).toBe('reverted')

    for (const args of [['preview', '--revert', first, '--project', projectId], ['commit'], ['commit', '--plan', plan, '--project', projectId], ['status', '--limit', '501'], ['status', '--status', 'adopt'], ['status', '--reason', 'edge-changed']]) {
      const r = await svc('admin', 'adoption', ...args, '--json')
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.json.error.code).toBe('usage_error')
    }
  }, 180_000)
})
