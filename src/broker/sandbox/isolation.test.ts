import {existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {SANDBOX_NET_DIR} from './egress-plan.js'
import {egressRunning} from './egress.js'
import {findExecutable} from './host.js'
import {egressPorts, prepareIsolation, releaseIsolation, SANDBOX_UID} from './isolation.js'

// Real bwrap (the namespace probe) and real Unix sockets; no sandbox is started here.
const bwrap = findExecutable('bwrap', process.env.PATH)!
const root = mkdtempSync(join(tmpdir(), 'svc-iso-'))
afterAll(() => rmSync(root, {recursive: true, force: true}))

const settings = {network: 'isolated' as const, userNamespace: 'required' as const, egressAllow: ['registry.npmjs.org:443'], runtimeName: 'local'}
const input = (dir: string) => ({bwrap, dir, home: join(root, 'home'), env: {SVC_HUB_ENDPOINT: 'http://127.0.0.1:9810'}, command: ['/bin/bash'], path: process.env.PATH, brokerUid: 0})

describe('isolation of a local agent', () => {
  it('a root broker: uid 1000 with a passwd entry, its own network bridged at a short path, the proxy for listed hosts', async () => {
    const dir = join(root, 'sb', 'svc-a')
    const iso = await prepareIsolation(settings, input(dir))
    expect(iso.policy).toMatchObject({network: 'isolated', uid: SANDBOX_UID})
    expect(iso.policy.overlays).toEqual([
      {source: join(dir, 'passwd'), dest: '/etc/passwd'},
      {source: join(dir, 'group'), dest: '/etc/group'},
      {source: join(dir, 'net'), dest: SANDBOX_NET_DIR},
    ])
    expect(readFileSync(join(dir, 'passwd'), 'utf8')).toContain(`svc-agent:x:1000:1000:svc agent:${join(root, 'home')}:/bin/sh`)
    expect(iso.env.HTTPS_PROXY).toBe('http://127.0.0.1:3128')
    expect(iso.forwarders?.start).toContain(`UNIX-CONNECT:${SANDBOX_NET_DIR}/l0.sock`)
    expect(iso.forwarders?.wait).toContain('|| exit 70')
    expect(existsSync(join(dir, 'net', 'l0.sock'))).toBe(true)
    expect(egressRunning(join(dir, 'net'))).toBe(true)
    await releaseIsolation(dir)
    expect(existsSync(dir)).toBe(false)
    expect(egressRunning(join(dir, 'net'))).toBe(false)
  })

  it('a state directory too deep for a Unix socket path: the sockets go to a private temp directory, removed with the agent', async () => {
    const dir = join(root, 'x'.repeat(60), 'y'.repeat(40), 'sb', 'svc-0e394f0e-d671-4138-8273-4ec8ec0282da')
    const iso = await prepareIsolation(settings, input(dir))
    const net = iso.policy.overlays!.find((o) => o.dest === SANDBOX_NET_DIR)!.source
    expect(net.startsWith(join(tmpdir(), 'svc-egress-'))).toBe(true)
    expect(existsSync(join(net, 'proxy.sock'))).toBe(true)
    await releaseIsolation(dir)
    expect(existsSync(net)).toBe(false)
  })

  it("the forwarders' ports of an isolated network are not the agent's; an unreadable plan is refused, never taken for none", async () => {
    const dir = join(root, 'sb', 'svc-p')
    await prepareIsolation(settings, input(dir))
    const net = readFileSync(join(dir, 'net-dir'), 'utf8')
    const plan = JSON.parse(readFileSync(join(net, 'plan.json'), 'utf8'))
    expect(egressPorts(dir)).toEqual([...plan.loopback.map((l: {port: number}) => l.port), plan.proxy.port])
    expect(egressPorts(dir)).toContain(3128)
    unlinkSync(join(net, 'plan.json'))
    expect(() => egressPorts(dir)).toThrow()
    await releaseIsolation(dir)
    // The host's network: no forwarders of svc's, none to leave out.
    expect(egressPorts(join(root, 'sb', 'svc-none'))).toEqual([])
  })

  it('a broker that is not root keeps its uid; `host` network and `off` change nothing', async () => {
    const iso = await prepareIsolation({...settings, network: 'host', userNamespace: 'off'}, input(join(root, 'sb', 'svc-b')))
    expect(iso).toEqual({policy: {network: 'host', uid: undefined}, readable: [], env: {}, allowed: []})
    const user = await prepareIsolation({...settings, network: 'host'}, {...input(join(root, 'sb', 'svc-c')), brokerUid: 1234})
    expect(user.policy.uid).toBeUndefined()
  })
})
