import {spawn} from 'node:child_process'
import {closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {ENV_FD_LOADER, NICE_LOADER} from '../runtimes/tmux-args.js'
import {egressPlan, forwarderScript, type EgressPlan} from './egress-plan.js'
import {launcherScript} from './launcher.js'

// Real sh, bwrap (a network of its own) and socat: the sandbox's first program as the pane runs it.
const root = mkdtempSync(join(tmpdir(), 'svc-launcher-'))
afterAll(() => rmSync(root, {recursive: true, force: true}))

const dests = [
  {host: '127.0.0.1', port: 9810, why: 'SVC_HUB_ENDPOINT'},
  {host: 'localhost', port: 4000, why: 'ANTHROPIC_BASE_URL'},
  {host: 'api.anthropic.com', port: 443, why: 'claude API'},
]

/** Runs the launcher in bwrap (the env file on fd 3, as ENV_FD_LOADER leaves it) with `harness` as its command. */
function launch(plan: EgressPlan | undefined, harness: string, socat = '/usr/bin/socat', overlap = false, timeoutS?: number, more = {env: '', nice: 0}): Promise<{code: number | null; stdout: string; stderr: string}> {
  const file = join(root, `env-${Math.random()}`)
  writeFileSync(join(file), `SVC_AUTH_TOKEN='svc_agt_from-the-file'\nPATH='/usr/bin:/bin'\n${more.env}`, {mode: 0o600})
  const fd = openSync(file, 'r')
  rmSync(file)
  const script = launcherScript({forwarders: plan && forwarderScript(plan, socat, overlap, timeoutS), nice: more.nice})
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-net', '--unshare-pid', '--die-with-parent', '--', '/bin/sh', '-c', script, 'svc-sandbox', '/bin/sh', '-c', harness]
  // A session of its own (as a tmux pane is): the priority a launcher lowers is its session's
  // autogroup, which would otherwise be the test runner's.
  const child = spawn('bwrap', args, {stdio: ['ignore', 'pipe', 'pipe', fd], env: {PATH: process.env.PATH}, detached: true})
  closeSync(fd)
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d) => (stdout += d))
  child.stderr!.on('data', (d) => (stderr += d))
  return new Promise((resolve) => child.on('close', (code) => resolve({code, stdout, stderr})))
}

describe("the sandbox's launcher", () => {
  it('takes the variables from fd 3 and closes it; the harness runs once every forwarder listens', async () => {
    const plan = egressPlan(dests, '/nonexistent')
    // The "harness" counts the listening sockets of its network, and shows its variable and its open fds.
    const r = await launch(plan, 'echo "listening=$(cat /proc/net/tcp /proc/net/tcp6 | grep -c " 0A ")"; echo "token=$SVC_AUTH_TOKEN"; echo "fd3=$(readlink /proc/$$/fd/3 || echo none)"')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`listening=${plan.loopback.length + 1}\n`)
    expect(plan.loopback.length).toBe(3)
    expect(r.stdout).toContain('token=svc_agt_from-the-file\n')
    // The harness (the shell here) does not hold the env file: its fd 3 is closed before it runs
    // (fd 3 is free, so the shell's own pipe for `$(...)` takes it).
    expect(r.stdout).toMatch(/fd3=(none|pipe:.*)\n/)
  })

  it('without a network of its own: the variables, then the harness', async () => {
    const r = await launch(undefined, 'echo "token=$SVC_AUTH_TOKEN"')
    expect(r).toMatchObject({code: 0, stdout: 'token=svc_agt_from-the-file\n', stderr: ''})
  })

  it('a forwarder that fails ends the start with its error, and the harness never runs', async () => {
    // Two listeners on one port: the second socat's bind fails.
    const plan = egressPlan(dests.slice(0, 1), '/nonexistent')
    plan.loopback.push({...plan.loopback[0], socket: '/nonexistent/l1.sock'})
    const r = await launch(plan, 'echo harness-ran')
    expect(r.code).toBe(70)
    expect(r.stdout).toBe('')
    // With reuseaddr both binds may pass and the second listen() fail: socat says which.
    expect(r.stderr).toMatch(/^\r\nsvc: a network forwarder of the sandbox \(socat\) failed: .* E (bind\(.*127\.0\.0\.1:9810|listen\().*Address already in use\r\n$/)
  })

  it('a socat that cannot run ends the start with the reason', async () => {
    const r = await launch(egressPlan(dests.slice(0, 1), '/nonexistent'), 'echo harness-ran', '/nonexistent/socat')
    expect(r.code).toBe(70)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^\r\nsvc: a network forwarder of the sandbox \(socat\) failed: .*\/nonexistent\/socat.*not found\r\n$/)
  })

  it('a socat that neither listens nor fails ends the start after the timeout, waiting or overlapping', async () => {
    const hung = join(root, 'hung-socat')
    writeFileSync(hung, '#!/bin/sh\nexec sleep 600\n', {mode: 0o755})
    const plan = egressPlan(dests.slice(0, 1), '/nonexistent')
    const waited = await launch(plan, 'echo harness-ran', hung, false, 1)
    expect(waited.code).toBe(70)
    expect(waited.stdout).toBe('')
    expect(waited.stderr).toBe('\r\nsvc: the network forwarders of the sandbox (socat) did not listen within 1 s\r\n')
    const overlapped = await launch(plan, 'sleep 5; echo harness-finished', hung, true, 1)
    expect(overlapped.code).not.toBe(0)
    expect(overlapped.stdout).toBe('')
    expect(overlapped.stderr).toBe('\r\nsvc: the network forwarders of the sandbox (socat) did not listen within 1 s\r\n')
  })

  it('overlapping (Claude Code): the harness runs at once, the forwarders come up beside it, and none is its child', async () => {
    const plan = egressPlan(dests, '/nonexistent')
    // The harness (perl, which like Claude Code waits for no child it did not start) waits up to 5 s
    // for the four listeners, then a moment for the reader to end, then lists its own children.
    const harness = `exec perl -e 'for (1..500) { open my $t, "-|", "cat /proc/net/tcp /proc/net/tcp6"; $n = grep / 0A /, <$t>; close $t; last if $n == 4; select undef, undef, undef, 0.01 } select undef, undef, undef, 0.3; open my $c, "<", "/proc/$$/task/$$/children"; @k = split " ", scalar <$c>; print "listening=$n\\nchildren=", scalar(@k), "\\n"'`
    const r = await launch(plan, harness, '/usr/bin/socat', true)
    expect(r.stderr).toBe('')
    expect(r.stdout).toBe('listening=4\nchildren=0\n')
  })

  it('overlapping, a forwarder that fails still ends the start: its error, and the harness killed', async () => {
    const plan = egressPlan(dests.slice(0, 1), '/nonexistent')
    plan.loopback.push({...plan.loopback[0], socket: '/nonexistent/l1.sock'})
    const r = await launch(plan, 'sleep 3; echo harness-finished', '/usr/bin/socat', true)
    expect(r.stdout).toBe('')
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/^\r\nsvc: a network forwarder of the sandbox \(socat\) failed: .* E (bind|listen)\(.*Address already in use\r\n$/)
  })

  it("forwarders go on forwarding once nobody reads their logs (socat ignores SIGPIPE): 30 connections, 30 answers", async () => {
    const dir = mkdtempSync(join(root, 'net-'))
    const server: Server = createServer((c) => c.end('pong\n'))
    await new Promise<void>((r) => server.listen(join(dir, 'l0.sock'), r))
    try {
      const plan = egressPlan(dests.slice(0, 1), dir)
      const r = await launch(plan, 'i=0; while [ $i -lt 30 ]; do socat -u TCP:127.0.0.1:9810 - </dev/null; i=$((i + 1)); done | grep -c pong')
      expect(r.stderr).toBe('')
      expect(r.stdout.trim()).toBe('30')
    } finally {
      server.close()
    }
  }, 60_000)
})

/** Variables an agent may well have, named as the launcher's own; each harness must see them as set. */
const SHARED_NAMES = ['svc_fw', 'svc_on', 'svc_i', 'svc_niced', 'svc_n', 'svc_l']
const sharedEnv = SHARED_NAMES.map((k) => `${k}='agent value of ${k}'\n`).join('')
const printShared = SHARED_NAMES.map((k) => `echo "${k}=$${k}"`).join('; ')
/** The harness's priority: its autogroup's nice value where it has one, else its own. */
const printNice = `read _ _ g < /proc/self/autogroup 2>/dev/null || g=; echo "nice=$(cut -d' ' -f19 /proc/$$/stat) autogroup=$g"`
/** Whether what printNice printed shows `n`: on the autogroup, or on the process when autogroups are off. */
const lowered = (line: string, n: number) => new RegExp(`^nice=(0 autogroup=${n}|${n} autogroup=\\d*)$`).test(line.trim())
const sharedSeen = SHARED_NAMES.map((k) => `${k}=agent value of ${k}\n`).join('')

describe("the agent's variables that share the launcher's names", () => {
  it('reach the harness as the agent set them, after the forwarders and the priority (waiting or overlapping)', async () => {
    const plan = egressPlan(dests.slice(0, 1), '/nonexistent')
    for (const overlap of [false, true]) {
      const r = await launch(plan, `${printShared}; ${printNice}`, '/usr/bin/socat', overlap, undefined, {env: sharedEnv, nice: 5})
      expect(r.stderr).toBe('')
      expect(r.stdout.startsWith(sharedSeen)).toBe(true)
      expect(lowered(r.stdout.slice(sharedSeen.length), 5), r.stdout.slice(sharedSeen.length)).toBe(true)
      expect(r.code).toBe(0)
    }
  })

  it('through NICE_LOADER (a session without the sandbox) too, and the priority is lowered', async () => {
    const env: Record<string, string> = {PATH: process.env.PATH ?? '/usr/bin:/bin'}
    for (const k of SHARED_NAMES) env[k] = `agent value of ${k}`
    // Its own session, as a tmux pane: the autogroup it lowers is not the test runner's.
    const child = spawn('/bin/sh', ['-c', NICE_LOADER, '7', 'sh', '-c', `${printShared}; ${printNice}`], {env, detached: true})
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const code = await new Promise((r) => child.on('close', r))
    expect(code).toBe(0)
    expect(out.startsWith(sharedSeen)).toBe(true)
    // Either the autogroup took it (the process's own nice stays 0) or nice(1) did.
    expect(lowered(out.slice(sharedSeen.length), 7), out.slice(sharedSeen.length)).toBe(true)
  })
})

describe('ENV_FD_LOADER (the pane, before bwrap)', () => {
  it('opens the env file on fd 3, removes it, and runs the command with TERM alone of its environment', async () => {
    const file = join(root, 'pane.env')
    writeFileSync(file, "SVC_AUTH_TOKEN='svc_agt_x'\n", {mode: 0o600})
    const child = spawn('/bin/sh', ['-c', ENV_FD_LOADER, file, 'sh', '-c', 'cat /proc/self/environ | tr "\\0" "\\n"; echo ---; cat <&3'], {env: {PATH: process.env.PATH, TERM: 'xterm-test', BROKER_ONLY: 'broker-secret'}})
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    await new Promise((r) => child.on('close', r))
    const [environ, content] = out.split('---\n')
    expect(environ.split('\n').filter((l) => l && !l.startsWith('PWD='))).toEqual(['TERM=xterm-test'])
    expect(content).toBe("SVC_AUTH_TOKEN='svc_agt_x'\n")
    await expect.poll(() => existsSync(file)).toBe(false)
  })
})
