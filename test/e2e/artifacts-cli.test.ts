import {mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {openStore} from '../../src/store/store.js'
import {makeAgent, sha256} from '../helpers/artifacts.js'
import {cliEnv, freePort, runCli, startServerProcess, type RunningServer} from '../helpers/cli.js'

describe('svc artifact publish and get against a workstation Hub', {timeout: 120_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-art-'))
  const work = mkdtempSync(join(tmpdir(), 'svc-e2e-art-work-'))
  let server: RunningServer
  let env: NodeJS.ProcessEnv
  let projectId: string
  // Generous timeouts: the machine running the suite may be busy.
  const svc = (args: string[], extra: Record<string, string> = {}) => runCli(args, {env: {...env, ...extra}, cwd: work, timeoutMs: 60_000})

  beforeAll(async () => {
    // Its own port for the co-located broker: other Hubs may be running beside this one.
    server = await startServerProcess([], cliEnv(home, {SVC_SERVER_BROKER_PORT: String(await freePort())}), 60_000)
    env = cliEnv(home, {SVC_HUB_ENDPOINT: server.url})
    const r = await svc(['project', 'register', 'demo', '--no-remote', '--json'])
    expect(r.code, r.stderr).toBe(0)
    projectId = r.json.project.id
  })
  afterAll(async () => {
    await server?.stop()
  })

  const write = (name: string, text: string | Buffer) => {
    const p = join(work, name)
    writeFileSync(p, text)
    return p
  }

  it('publish --json answers the contract shape; the human form prints the versioned reference and page URL', async () => {
    const file = write('report.md', '# Report\n')
    const r = await svc(['artifact', 'publish', file, '--project', 'demo', '--title', 'The report', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.artifact).toMatchObject({title: 'The report', owner: {kind: 'user', id: 'dev-user'}, projectId, currentVersion: 1})
    expect(r.json.version.manifest).toEqual([{path: 'report.md', size: 9, sha256: sha256('# Report\n'), mediaType: 'text/markdown'}])
    expect(r.json.url).toBe(`${server.url}/projects/${projectId}/artifacts/${r.json.artifact.id}`)

    const h = await svc(['artifact', 'publish', file], {SVC_HUB_GROVE_ID: 'demo'})
    expect(h.code, h.stderr).toBe(0)
    expect(h.stdout).toMatch(/^Published svc:\/\/artifact\/[0-9a-f-]{36}@1 \(report\.md\)\nhttp:\/\/127\.0\.0\.1:\d+\/projects\/[0-9a-f-]{36}\/artifacts\/[0-9a-f-]{36}\n$/)
  })

  it('publish refuses what is not a regular file, and a user without a project, before any request (exit 2)', async () => {
    mkdirSync(join(work, 'adir'), {recursive: true})
    const dir = await svc(['artifact', 'publish', join(work, 'adir'), '--project', 'demo', '--json'])
    expect(dir.code).toBe(2)
    expect(dir.json.error.code).toBe('usage_error')
    const missing = await svc(['artifact', 'publish', join(work, 'nope.txt'), '--project', 'demo', '--json'])
    expect(missing.code).toBe(2)
    const noProject = await svc(['artifact', 'publish', write('p.txt', 'p'), '--json'])
    expect(noProject.code).toBe(2)
    expect(noProject.json.error.message).toMatch(/--project/)
  })

  it('get accepts all three reference forms and selects versions', async () => {
    const file = write('doc.txt', 'version one\n')
    const v1 = (await svc(['artifact', 'publish', file, '--project', 'demo', '--json'])).json
    const id = v1.artifact.id
    write('doc.txt', 'version two\n')
    const v2 = await svc(['artifact', 'publish', file, '--to', `svc://artifact/${id}`, '--json'])
    expect(v2.code, v2.stdout + v2.stderr).toBe(0)
    expect(v2.json.version.seq).toBe(2)

    const bare = await svc(['artifact', 'get', id])
    expect(bare.code, bare.stderr).toBe(0)
    expect(bare.stdout).toBe('version two\n')
    const uri = await svc(['artifact', 'get', `svc://artifact/${id}`])
    expect(uri.stdout).toBe('version two\n')
    const at1 = await svc(['artifact', 'get', `svc://artifact/${id}@1`])
    expect(at1.stdout).toBe('version one\n')
    const at3 = await svc(['artifact', 'get', `svc://artifact/${id}@3`, '--json', '-o', join(work, 'x')])
    expect(at3.code).toBe(1)
    expect(at3.json.error.code).toBe('not_found')
    const bad = await svc(['artifact', 'get', 'svc://agent/nope', '--json', '-o', join(work, 'x')])
    expect(bad.code).toBe(2)
    expect(bad.json.error.code).toBe('usage_error')
  })

  it('get -o writes a path; an existing directory receives the file under its own name; --json describes it', async () => {
    const file = write('data.csv', 'a,b\n1,2\n')
    const id = (await svc(['artifact', 'publish', file, '--project', 'demo', '--json'])).json.artifact.id
    const outDir = join(work, 'out')
    mkdirSync(outDir, {recursive: true})
    const r = await svc(['artifact', 'get', id, '-o', outDir, '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({ref: `svc://artifact/${id}`, version: {seq: 1, ref: `svc://artifact/${id}@1`}, file: {path: 'data.csv', size: 8, sha256: sha256('a,b\n1,2\n'), mediaType: 'text/csv'}, out: join(outDir, 'data.csv')})
    expect(readFileSync(join(outDir, 'data.csv'), 'utf8')).toBe('a,b\n1,2\n')
    const named = await svc(['artifact', 'get', `svc://artifact/${id}@1`, '--out', join(work, 'renamed.csv')])
    expect(named.code).toBe(0)
    expect(named.stdout).toBe(`Wrote ${join(work, 'renamed.csv')} (8 bytes, svc://artifact/${id}@1)\n`)
    expect(readFileSync(join(work, 'renamed.csv'), 'utf8')).toBe('a,b\n1,2\n')
    // Replacing an existing file.
    writeFileSync(join(work, 'renamed.csv'), 'old')
    expect((await svc(['artifact', 'get', id, '-o', join(work, 'renamed.csv')])).code).toBe(0)
    expect(readFileSync(join(work, 'renamed.csv'), 'utf8')).toBe('a,b\n1,2\n')
  })

  it('a stored blob that no longer matches its SHA-256 fails get and leaves the existing file untouched', async () => {
    const file = write('important.txt', 'the real content\n')
    const id = (await svc(['artifact', 'publish', file, '--project', 'demo', '--json'])).json.artifact.id
    const blobDir = join(home, '.svc', 'storage', 'artifacts', id)
    const [blob] = readdirSync(blobDir)
    writeFileSync(join(blobDir, blob), 'tampered content!\n')

    const dest = join(work, 'existing.txt')
    writeFileSync(dest, 'keep me\n')
    const r = await svc(['artifact', 'get', id, '-o', dest, '--json'])
    expect(r.code).toBe(1)
    expect(r.json.error).toMatchObject({code: 'sha256_mismatch', details: {expected: sha256('the real content\n'), actual: sha256('tampered content!\n')}})
    expect(readFileSync(dest, 'utf8')).toBe('keep me\n')
    expect(readdirSync(work).filter((n) => n.includes('svc-tmp'))).toEqual([])
    const toStdout = await svc(['artifact', 'get', id])
    expect(toStdout.code).toBe(1)
    expect(toStdout.stdout).toBe('')
    expect(toStdout.stderr).toMatch(/sha256_mismatch/)
  })

  it('agent mode: SVC_AUTH_TOKEN with an agent token publishes into the agent\'s own project and reads it back', async () => {
    const store = await openStore({driver: 'sqlite', url: join(home, '.svc', 'hub.db')})
    let agent: {id: string; token: string}
    try {
      agent = await makeAgent(store, projectId, 'baseline')
    } finally {
      await store.close()
    }
    const file = write('from-agent.txt', 'agent output\n')
    const r = await svc(['artifact', 'publish', file, '--json'], {SVC_AUTH_TOKEN: agent.token, SVC_AGENT_ID: agent.id, SVC_PROJECT_ID: projectId})
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.json.artifact).toMatchObject({owner: {kind: 'agent', id: agent.id}, projectId})
    const back = await svc(['artifact', 'get', r.json.artifact.ref], {SVC_AUTH_TOKEN: agent.token})
    expect(back.code, back.stderr).toBe(0)
    expect(back.stdout).toBe('agent output\n')
  })

  it('reports 413 file_too_large from the Hub while uploading a large file', async () => {
    const big = write('big.bin', Buffer.alloc(32 * 1024 * 1024 + 1))
    const r = await svc(['artifact', 'publish', big, '--project', 'demo', '--json'])
    expect(r.code).toBe(1)
    expect(r.json.error.code).toBe('file_too_large')
  })
})
