import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {agentToken} from './hub-post.js'
import {deliver, deliverKept, type PostReport} from './status-delivery.js'

/**
 * The broker's courier reads and writes `<agent home>/.svc/`, which the agent writes too: what a
 * hostile agent plants there must neither hang the broker (a FIFO, a link to /dev/zero), nor
 * make it read another file, nor write through a link to a host file.
 */
describe('kept reports against a hostile agent HOME', () => {
  let dir: string
  let svcDir: string
  let env: NodeJS.ProcessEnv
  const posted: unknown[] = []
  const unreachable: PostReport = async (_env, report) => {
    posted.push(report)
    return null
  }
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-kept-hostile-'))
    svcDir = join(dir, 'home', '.svc')
    mkdirSync(svcDir, {recursive: true})
    env = {SVC_AGENT_ID: 'a1', SVC_AUTH_TOKEN_FILE: join(svcDir, 'agent-token'), SVC_HUB_ENDPOINT: 'http://127.0.0.1:9'}
    posted.length = 0
  })
  afterEach(() => rmSync(dir, {recursive: true, force: true}))

  it('a FIFO or a link to /dev/zero at the token or kept file is not read (the broker would block or fill its memory)', async () => {
    execFileSync('mkfifo', [join(svcDir, 'status-pending.json')])
    symlinkSync('/dev/zero', join(svcDir, 'agent-token'))
    expect(agentToken({SVC_AUTH_TOKEN_FILE: join(svcDir, 'agent-token')})).toBeNull()
    await deliverKept(env, unreachable)
    expect(posted).toEqual([])
  })

  it('kept reports planted as a link to another file are not read through it', async () => {
    const other = join(dir, 'other-agent-kept.json')
    writeFileSync(other, JSON.stringify({activity: 'idle', detail: 'secret of another agent', turns: 1, usage: []}))
    symlinkSync(other, join(svcDir, 'status-pending.json'))
    await deliverKept(env, unreachable)
    expect(posted).toEqual([])
    expect(readFileSync(other, 'utf8')).toContain('secret of another agent')
  })

  it('keeping a report never writes through a link planted at its temporary name', async () => {
    const victim = join(dir, 'victim')
    writeFileSync(victim, 'host file\n')
    const file = join(svcDir, 'status-pending.json')
    symlinkSync(victim, `${file}.${process.pid}.tmp`)
    expect(await deliver(env, {activity: 'thinking', detail: 'x'}, unreachable)).toBeNull()
    expect(readFileSync(victim, 'utf8')).toBe('host file\n')
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({activity: 'thinking', detail: 'x'})
  })

  it('a .svc that is a link to another directory is neither read nor written', async () => {
    const elsewhere = join(dir, 'elsewhere')
    mkdirSync(elsewhere)
    writeFileSync(join(elsewhere, 'status-pending.json'), JSON.stringify({activity: 'idle', turns: 0, usage: []}))
    const home = join(dir, 'home2')
    mkdirSync(home)
    symlinkSync(elsewhere, join(home, '.svc'))
    const e = {...env, SVC_AUTH_TOKEN_FILE: join(home, '.svc', 'agent-token')}
    await deliverKept(e, unreachable)
    expect(posted).toEqual([])
    await deliver(e, {activity: 'thinking'}, unreachable)
    expect(existsSync(join(elsewhere, 'status-pending.json'))).toBe(true)
    expect(JSON.parse(readFileSync(join(elsewhere, 'status-pending.json'), 'utf8'))).toEqual({activity: 'idle', turns: 0, usage: []})
  })
})
