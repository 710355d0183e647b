import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import pg from 'pg'
import {describe, expect, it, vi} from 'vitest'
import {MIGRATIONS} from '../../src/store/migrations/index.js'
import {spawn} from 'node:child_process'
import {BIN, cliEnv, freePort, runCli, startServerProcess} from '../helpers/cli.js'
import {createPgSchema, pgAvailable, pgUrl} from '../helpers/pg.js'

// Liveness limits only (a shared, loaded machine): a Hub may take many seconds to come up.
vi.setConfig({testTimeout: 120_000})
const SLOW = {timeoutMs: 90_000}

function homeWith(settings?: string): string {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-start-'))
  if (settings !== undefined) {
    mkdirSync(join(home, '.svc'), {recursive: true})
    writeFileSync(join(home, '.svc', 'settings.yaml'), settings)
  }
  return home
}

describe('svc server start refuses bad configuration with exit 2', () => {
  it('SVC_SERVER_MODE=bogus exits 2 naming the value', async () => {
    const r = await runCli(['server', 'start', '--port', '0'], {env: cliEnv(homeWith(), {SVC_SERVER_MODE: 'bogus'}), ...SLOW})
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('"bogus"')
    expect(r.stdout).toBe('')
  })

  it('server.mode: Hosted in the settings file exits 2 (the mode is case-sensitive)', async () => {
    const r = await runCli(['server', 'start', '--port', '0'], {env: cliEnv(homeWith('schema_version: "1"\nserver:\n  mode: Hosted\n')), ...SLOW})
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('"Hosted"')
  })

  it('with --json the refusal is one JSON document on stdout', async () => {
    const r = await runCli(['server', 'start', '--port', '0', '--json'], {env: cliEnv(homeWith(), {SVC_SERVER_MODE: 'bogus'}), ...SLOW})
    expect(r.code).toBe(2)
    expect(r.json).toEqual({error: {code: 'usage_error', message: expect.stringContaining('"bogus"')}})
  })

  it('a YAML syntax error exits 2 naming the file, the line and the key', async () => {
    const home = homeWith('schema_version: "1"\nserver:\n  hub:\n    port: 9811\n    host: "127.0.0.1\n')
    const file = join(home, '.svc', 'settings.yaml')
    const r = await runCli(['server', 'start', '--port', '0'], {env: cliEnv(home), ...SLOW})
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(new RegExp(`${file.replace(/[.]/g, '\\.')}:[2-6]:\\d+: server\\.hub\\.host: `))
    const j = await runCli(['server', 'start', '--port', '0', '--json'], {env: cliEnv(home), ...SLOW})
    expect(j.code).toBe(2)
    expect(j.json.error).toMatchObject({code: 'config_invalid', details: {file, key: 'server.hub.host'}})
    expect(j.json.error.details.line).toBeGreaterThan(1)
  })

  it('a wrong type exits 2 with file:line:column, the key, expected and found', async () => {
    const home = homeWith('schema_version: "1"\nserver:\n  hub:\n    port: abc\n')
    const file = join(home, '.svc', 'settings.yaml')
    const r = await runCli(['server', 'start'], {env: cliEnv(home), ...SLOW})
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`${file}:4:11: server.hub.port: expected a whole number, found the string "abc"`)
    const j = await runCli(['server', 'start', '--json'], {env: cliEnv(home), ...SLOW})
    expect(j.json).toEqual({error: {code: 'config_invalid', message: expect.stringContaining('server.hub.port'), details: {file, line: 4, column: 11, key: 'server.hub.port'}}})
  })

  it('a port in use exits 1 naming the port', async () => {
    const {createServer} = await import('node:net')
    const blocker = createServer()
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()))
    const port = (blocker.address() as {port: number}).port
    try {
      const r = await runCli(['server', 'start', '--port', String(port)], {env: cliEnv(homeWith()), ...SLOW})
      expect(r.code).toBe(1)
      expect(r.stderr).toContain(`port ${port}`)
      expect(r.stderr).toContain('already in use')
    } finally {
      blocker.close()
    }
  })

  it('a bad environment variable exits 2 naming it', async () => {
    const r = await runCli(['server', 'start'], {env: cliEnv(homeWith(), {SVC_SERVER_HUB_PORT: 'eighty'}), ...SLOW})
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('SVC_SERVER_HUB_PORT')
    expect(r.stderr).toContain('"eighty"')
  })
})

describe('svc server start --json', () => {
  it('prints exactly one JSON document when ready, and nothing more when it stops', async () => {
    const port = await freePort()
    const child = spawn(process.execPath, [BIN, 'server', 'start', '--port', String(port), '--json'], {env: cliEnv(homeWith()), stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no JSON line within 90 s: ${stderr}`)), 90_000)
      child.stdout.on('data', (d) => {
        stdout += d
        if (stdout.includes('\n')) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
    expect(JSON.parse(stdout)).toEqual({url: `http://127.0.0.1:${port}`, mode: 'workstation', database: 'sqlite'})
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(stdout.trim().split('\n')).toHaveLength(1)
    expect(stderr).not.toContain('svc hub listening')
  })
})

describe('a signal during start-up', () => {
  it('shuts the Hub down cleanly once start-up has finished: exit 0', async () => {
    const child = spawn(process.execPath, [BIN, 'server', 'start', '--port', String(await freePort())], {env: cliEnv(homeWith()), stdio: ['ignore', 'pipe', 'pipe']})
    let stderr = ''
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
    child.stdout.on('data', () => {})
    await new Promise<void>((resolve) => {
      child.stderr.on('data', (d) => {
        stderr += d
        // Migrations are done, listening and the co-located broker are still to come.
        if (stderr.includes('database migrated')) resolve()
      })
    })
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(stderr).toContain('stopped')
  })
})

const pgOk = await pgAvailable()

describe.skipIf(!pgOk)(`two hosted Hubs on one empty PostgreSQL database${pgOk ? '' : ' (SKIPPED: no PostgreSQL)'}`, () => {
  it('started at the same moment both come up and the migrations ran once', async () => {
    const schema = await createPgSchema()
    const env = (home: string) => cliEnv(home, {SVC_SERVER_DATABASE_DRIVER: 'postgres', SVC_SERVER_DATABASE_URL: schema.url})
    const servers = await Promise.all([
      startServerProcess(['--hosted', '--host', '127.0.0.1'], env(homeWith()), 90_000),
      startServerProcess(['--hosted', '--host', '127.0.0.1'], env(homeWith()), 90_000),
    ])
    try {
      for (const s of servers) {
        const {requestJson} = await import('../../src/client/http.js')
        const res = await requestJson<{status: string}>('GET', `${s.url}/healthz`)
        expect(res.body).toEqual({status: 'ok'})
        const ready = await requestJson<{status: string}>('GET', `${s.url}/readyz`)
        expect(ready.body).toEqual({status: 'ready'})
      }
      const client = new pg.Client({connectionString: pgUrl()})
      await client.connect()
      try {
        const {rows} = await client.query(`select name, count(*)::int as n from ${schema.schema}.svc_migrations group by name order by name`)
        expect(rows).toEqual(Object.keys(MIGRATIONS).sort().map((name) => ({name, n: 1})))
      } finally {
        await client.end()
      }
      // Exactly one of the two applied them.
      const migrated = servers.filter((s) => s.stderr().includes('database migrated'))
      expect(migrated).toHaveLength(1)
    } finally {
      await Promise.all(servers.map((s) => s.stop()))
      await schema.drop()
    }
  })
})
