import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {parseDocument} from 'yaml'
import pino from 'pino'
import {expect, it, describe} from 'vitest'
import {resolveBootstrap} from '../../src/config/bootstrap.js'
import {createHub} from '../../src/main.js'

const SAVER = fileURLToPath(new URL('../helpers/settings-saver.ts', import.meta.url))
const HEADER = '# crash test settings\nschema_version: "1"  # keep\nserver:\n  hub:\n    port: 10000  # the port\n'

/**
 * Killing the Hub (SIGKILL) at random points of saves that touch both the database and the file
 * never loses an acknowledged value and never leaves a torn file: the database is written first,
 * the file last by rename, so the survivors are the last acknowledged save or the one after it.
 */
describe('settings: crash during a save touching the database and the file', () => {
  it('SIGKILL at random delays: no acknowledged value lost, the file always parses with its comments', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-crash-'))
    mkdirSync(join(home, '.svc'), {recursive: true})
    writeFileSync(join(home, '.svc/settings.yaml'), HEADER)
    const env: NodeJS.ProcessEnv = {...process.env, HOME: home}
    for (const k of Object.keys(env)) if (k.startsWith('SVC_')) delete env[k]
    let next = 1
    let acknowledged = 0
    try {
      for (let round = 0; round < 6; round++) {
        const child = spawn(process.execPath, ['--import', 'tsx', SAVER, String(next)], {env, stdio: ['ignore', 'pipe', 'pipe']})
        let acked = 0
        let ready = false
        let err = ''
        child.stderr.on('data', (d) => (err += d))
        child.stdout.on('data', (d: Buffer) => {
          for (const line of d.toString().split('\n')) {
            if (line === 'ready') ready = true
            const m = /^saved (\d+)$/.exec(line)
            if (m) acked = Number(m[1])
          }
        })
        const exited = new Promise<void>((r) => child.on('exit', () => r()))
        const deadline = Date.now() + 60_000
        while (!ready && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 20))
        expect(ready, err).toBe(true)
        // Most rounds kill while saves are streaming (after the first acknowledgement), at a random point.
        if (round % 3 !== 2) {
          const seen = Date.now() + 30_000
          while (acked < next && Date.now() < seen && child.exitCode === null) await new Promise((r) => setTimeout(r, 5))
        }
        await new Promise((r) => setTimeout(r, Math.random() * 300))
        child.kill('SIGKILL')
        await exited
        acknowledged += acked ? acked - next + 1 : 0
        const text = readFileSync(join(home, '.svc/settings.yaml'), 'utf8')
        const doc = parseDocument(text)
        expect(doc.errors, text).toEqual([])
        expect(text).toContain('# crash test settings')
        expect(text).toContain('schema_version: "1"  # keep')
        const port = (doc.toJS() as {server: {hub: {port: number}}}).server.hub.port
        // Temp files of an interrupted write are never left as the settings file.
        expect(readdirSync(join(home, '.svc')).filter((f) => f.startsWith('settings.yaml') && f !== 'settings.yaml' && !f.endsWith('.lock'))).toEqual([])
        const bootEnv = {...env}
        const hub = await createHub(resolveBootstrap({port: 0}, bootEnv), {env: bootEnv, logger: pino({level: 'silent'})})
        const quota = Number((hub.services.settings!.view() as {quotas?: {max_agents_per_project?: number}}).quotas?.max_agents_per_project ?? 0)
        await hub.close()
        if (acked > 0) {
          expect(quota).toBeGreaterThanOrEqual(acked)
          expect(port).toBeGreaterThanOrEqual(10_000 + acked)
        }
        // At most the save in flight got further than the acknowledgement, database first.
        expect(quota - (port - 10_000)).toBeGreaterThanOrEqual(0)
        expect(quota - (port - 10_000)).toBeLessThanOrEqual(1)
        next = Math.max(quota, port - 10_000) + 1
      }
      // The kills landed while saves were running, not only before the first.
      expect(acknowledged).toBeGreaterThan(0)
    } finally {
      rmSync(home, {recursive: true, force: true})
    }
  }, 240_000)
})
