import {mkdtempSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliEnv, runCli, startServerProcess, type RunningServer} from '../helpers/cli.js'

describe('quick start: a workstation Hub and the CLI', () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-'))
  let server: RunningServer
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    server = await startServerProcess([], cliEnv(home))
    env = cliEnv(home, {SVC_HUB_ENDPOINT: server.url})
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('writes the dev credential with mode 0600', () => {
    const st = statSync(join(home, '.svc', 'dev-token'))
    expect(st.mode & 0o777).toBe(0o600)
  })

  it('whoami --json names the dev user, credential kind dev, system admin', async () => {
    const r = await runCli(['whoami', '--json'], {env})
    expect(r.code).toBe(0)
    expect(r.json).toMatchObject({principal: {kind: 'user', id: 'dev-user'}, credentialKind: 'dev', systemAdmin: true})
  })

  it('shuts down cleanly on SIGTERM with exit code 0', async () => {
    const other = await startServerProcess([], cliEnv(mkdtempSync(join(tmpdir(), 'svc-e2e-'))))
    expect(await other.stop('SIGTERM')).toBe(0)
    expect(other.stderr()).toContain('stopped')
  })
})
