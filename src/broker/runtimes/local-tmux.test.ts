import {existsSync, readFileSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {DEFAULT_RESOURCES, type AgentSpec, type RuntimeHandle, type TerminalStream} from '../runtime.js'
import {LocalTmuxRuntime} from './local-tmux.js'
import {runCommand} from './run-command.js'
import {usePrivateTmux} from '../../../test/helpers/private-tmux.js'
import {defaultServerMayRun, tmuxServerMayRun} from './tmux-default-socket.js'

// Real tmux on a private server: TMUX_TMPDIR points at this file's own directory, so a user's
// tmux is never touched and test files run in parallel.
let dir: string
let env: NodeJS.ProcessEnv
let rt: LocalTmuxRuntime
let n = 0

usePrivateTmux('svc-tmux-', {pollMs: 50}, async (t) => {
  ;({dir, env, rt} = t)
  if (!(await rt.available())) throw new Error('these tests need tmux on PATH (Debian: apt-get install -y tmux)')
})

const SHELL = ['/bin/bash', '--noprofile', '--norc', '-i']

function spec(over: Partial<AgentSpec> = {}): AgentSpec {
  n += 1
  const agentId = `agent-${n}-${process.pid}`
  return {agentId, name: `a${n}`, projectId: 'p1', command: SHELL, env: {SVC_AGENT_ID: agentId, PS1: '$ '}, resources: DEFAULT_RESOURCES, ...over}
}

async function capture(h: RuntimeHandle): Promise<string> {
  const r = await runCommand('tmux', ['-L', 'svc', 'capture-pane', '-p', '-J', '-t', `=${h.ref}:`], {env})
  return r.stdout.toString('utf8')
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms
  let last: unknown
  for (;;) {
    try {
      const v = await fn()
      if (v) return v
    } catch (e) {
      last = e
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const screenHas = (h: RuntimeHandle, text: string) => waitFor(`"${text}" on screen`, async () => (await capture(h)).includes(text))

async function typeLine(h: RuntimeHandle, line: string) {
  await rt.sendKeys(h, {literal: line})
  await rt.sendKeys(h, {key: 'Enter'})
}

/** Collects a stream's output; `until` resolves once the text has been seen. */
function collect(t: TerminalStream) {
  const chunks: Buffer[] = []
  t.onData((c) => chunks.push(c))
  const text = () => Buffer.concat(chunks).toString('utf8')
  return {chunks, text, until: (s: string) => waitFor(`"${s}" in attach output`, async () => text().includes(s))}
}

describe('local tmux runtime (real tmux)', () => {
  it('is available when tmux is on PATH', async () => {
    expect(await rt.available()).toBe(true)
    expect(await new LocalTmuxRuntime({stateDir: dir, tmux: 'no-such-tmux-binary'}).available()).toBe(false)
  })

  it('starts a session whose shell sees the agent environment', async () => {
    const s = spec()
    const h = await rt.start(s)
    expect(h).toEqual({runtime: 'local', ref: `svc-${s.agentId}`, sandbox: 'none'})
    expect((await runCommand('tmux', ['-L', 'svc', 'has-session', '-t', `=${h.ref}`], {env})).code).toBe(0)
    expect(await rt.isRunning(h)).toBe(true)
    expect(await rt.terminalReady(h)).toBe(true)
    await typeLine(h, 'echo "id=$SVC_AGENT_ID"')
    await screenHas(h, `id=${s.agentId}`)
    await expect(rt.start(s)).rejects.toThrow(/already has a tmux session/)
    await rt.stop(h)
  })

  it('`nice` lowers the priority of the agent\'s session: its autogroup where the kernel groups by session, else each process', async () => {
    const autogroups = readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1'
    const niced = new LocalTmuxRuntime({stateDir: join(dir, 'state'), env, pollMs: 50, nice: 7})
    for (const [runtime, nice] of [[niced, 7], [rt, 0]] as const) {
      const s = spec()
      const h = await runtime.start(s)
      // What the harness's own shell, and a program it runs, see.
      await typeLine(h, 'echo "prio=$(sed "s/.* nice //" /proc/self/autogroup):$(nice)"')
      await screenHas(h, autogroups ? `prio=${nice}:0` : `prio=0:${nice}`)
      await runtime.stop(h)
    }
  })

  it('keeps the agent token off tmux argv (the server keeps its first client argv for life)', async () => {
    const token = `svc_agt_${process.pid}_secret`
    // A socket of its own, so this start is the one that starts the server.
    const own = new LocalTmuxRuntime({stateDir: join(dir, 'state'), env, socketName: 'svc-token'})
    const tmux = (...args: string[]) => runCommand('tmux', ['-L', 'svc-token', ...args], {env})
    try {
      const h = await own.start(spec({env: {SVC_AUTH_TOKEN: token, PS1: '$ '}}))
      await own.sendKeys(h, {literal: 'echo "tok=$SVC_AUTH_TOKEN"'})
      await own.sendKeys(h, {key: 'Enter'})
      await waitFor('the token in the shell', async () => (await tmux('capture-pane', '-p', '-t', `=${h.ref}:`)).stdout.toString().includes(`tok=${token}`))
      const pid = (await tmux('display-message', '-p', '#{pid}')).stdout.toString().trim()
      const ps = await runCommand('ps', ['-o', 'args=', '-p', pid])
      // The server is started with no session (keepServerArgs), so its argv holds no agent's
      // command at all; new-session's own argv holds the env file's path, never its variables
      // (tmux-args.test.ts).
      expect(ps.stdout.toString()).toContain('start-server')
      expect(ps.stdout.toString()).not.toContain(token)
      expect(existsSync(join(dir, 'state', `${h.ref}.env`))).toBe(false)
      await own.stop(h)
    } finally {
      await tmux('kill-server')
    }
  })

  it('passes untrusted env values and arguments literally (spaces, quotes, ;, $())', async () => {
    const marker = join(dir, 'pwned')
    const weird = `a b "q" 'x' ; $(touch ${marker}) \`touch ${marker}\`;`
    const s = spec({
      env: {WEIRD: weird, PS1: '$ '},
      command: ['/bin/bash', '--noprofile', '--norc', '-c', 'printf "<%s>" "$WEIRD" "$@"; echo; sleep 100', 'arg0', 'two words;', `$(touch ${marker})`, ';'],
    })
    const h = await rt.start(s)
    await screenHas(h, `<${weird}><two words;><$(touch ${marker})><;>`)
    expect(existsSync(marker)).toBe(false)
    await rt.stop(h)
  })

  it('never runs a one-element command through a shell', async () => {
    const marker = join(dir, 'pwned-single')
    const h = await rt.start(spec({command: [`echo hi; touch ${marker}`]}))
    await waitFor('the command to fail', async () => !(await rt.isRunning(h)))
    expect(existsSync(marker)).toBe(false)
    await rt.stop(h)
  })

  it('areRunning answers for many agents with one tmux call: running, ended, gone, and no server at all', async () => {
    const live = await rt.start(spec({agentId: 'many-live', command: ['sleep', '60']}))
    const ended = await rt.start(spec({agentId: 'many-ended', command: ['true']}))
    await waitFor('the short command to end', async () => !(await rt.isRunning(ended)))
    const gone = {runtime: 'local' as const, ref: 'svc-many-never-started'}
    expect(await rt.areRunning([live, ended, gone])).toEqual([true, false, false])
    await rt.stop(live)
    await rt.stop(ended)
    expect(await rt.areRunning([live])).toEqual([false])
    const lone = new LocalTmuxRuntime({stateDir: join(dir, 'state-lone'), env, socketName: 'svc-no-server-here'})
    expect(await lone.areRunning([live])).toEqual([false])
    await expect(rt.areRunning([{runtime: 'local', ref: 'svc-x:0'}])).rejects.toThrow(/not a session name/)
  })

  it('a socket name keeps agents on their own tmux server', async () => {
    const own = new LocalTmuxRuntime({stateDir: join(dir, 'state'), env, socketName: 'svc-agents'})
    try {
      const h = await own.start(spec())
      expect(await own.isRunning(h)).toBe(true)
      expect(await rt.isRunning(h)).toBe(false)
      expect((await runCommand('tmux', ['-L', 'svc-agents', 'has-session', '-t', `=${h.ref}`], {env})).code).toBe(0)
      await own.stop(h)
    } finally {
      await runCommand('tmux', ['-L', 'svc-agents', 'kill-server'], {env})
    }
  })

  it("agents live on svc's own socket (-L svc): the default socket, a user's `tmux ls`, shows none of them", async () => {
    const h = await rt.start(spec({command: ['sleep', '60']}))
    try {
      expect(await rt.isRunning(h)).toBe(true)
      expect((await runCommand('tmux', ['-L', 'svc', 'ls', '-F', '#{session_name}'], {env})).stdout.toString()).toContain(h.ref)
      // The user's own server, with a session of theirs: it lists only that one.
      expect((await runCommand('tmux', ['new-session', '-d', '-s', 'users-own', 'sleep', '60'], {env})).code).toBe(0)
      expect((await runCommand('tmux', ['ls', '-F', '#{session_name}'], {env})).stdout.toString().trim()).toBe('users-own')
    } finally {
      await rt.stop(h)
      await runCommand('tmux', ['kill-server'], {env})
    }
  })

  it("an older svc's session on the default socket is still found, driven and stopped", async () => {
    // Started the way an svc from before the named socket did: on the default server.
    const s = spec()
    const ref = `svc-${s.agentId}`
    // (a default server still exiting from the test before drops new clients: try again)
    await waitFor('a session on the default server', async () => (await runCommand('tmux', ['new-session', '-d', '-s', ref, '-x', '80', '-y', '24', '-e', 'PS1=$ ', '--', ...SHELL], {env})).code === 0)
    const h: RuntimeHandle = {runtime: 'local', ref}
    try {
      // Where the runtime looks before asking the default server (no socket: no process spawned).
      expect(await defaultServerMayRun(env)).toBe(true)
      expect(await rt.isRunning(h)).toBe(true)
      expect(await rt.areRunning([h])).toEqual([true])
      await rt.sendKeys(h, {literal: 'echo "legacy-$((6*7))"'})
      await rt.sendKeys(h, {key: 'Enter'})
      await waitFor('the keys ran on the default server', async () => (await runCommand('tmux', ['capture-pane', '-p', '-t', `=${ref}:`], {env})).stdout.toString().includes('legacy-42'))
      expect(await rt.capture(h)).toContain('legacy-42')
      await expect(rt.start(s)).rejects.toThrow(/already has a tmux session/)
      await rt.stop(h)
      expect((await runCommand('tmux', ['has-session', '-t', `=${ref}`], {env})).code).not.toBe(0)
      expect(await rt.isRunning(h)).toBe(false)
    } finally {
      await runCommand('tmux', ['kill-server'], {env})
    }
    // The server gone, its socket file stays and refuses: no server to ask.
    await waitFor('the default server gone', async () => !(await defaultServerMayRun(env)))
    expect(await defaultServerMayRun({...env, TMUX_TMPDIR: join(dir, 'nonexistent')})).toBe(true)
    // svc's own socket the same way: a server there while one of its sessions runs.
    const own = await rt.start(spec())
    expect(await tmuxServerMayRun(env, 'svc')).toBe(true)
    await rt.stop(own)
  })

  it('refuses agent IDs that are not plain tokens', async () => {
    await expect(rt.start(spec({agentId: 'x; kill-server'}))).rejects.toThrow(/cannot name a session/)
    await expect(rt.isRunning({runtime: 'local', ref: 'svc-x:0'})).rejects.toThrow(/not a session name/)
  })

  it('logs hold the output so far and follow new output', async () => {
    const h = await rt.start(spec({command: ['/bin/bash', '--noprofile', '--norc', '-c', 'echo first-line; exec /bin/bash --noprofile --norc -i']}))
    await screenHas(h, 'first-line')
    // pipe-pane's `cat` writes the log a moment after the screen shows the output.
    await waitFor('the output in the log', async () => {
      let past = ''
      for await (const c of rt.logs(h, {follow: false})) past += c.toString('utf8')
      return past.includes('first-line')
    })

    const ac = new AbortController()
    let followed = ''
    const reader = (async () => {
      for await (const c of rt.logs(h, {follow: true, signal: ac.signal})) followed += c.toString('utf8')
    })()
    await waitFor('past output in the followed log', async () => followed.includes('first-line'))
    await typeLine(h, 'echo later-$((40+2))')
    await waitFor('new output in the followed log', async () => followed.includes('later-42'))
    ac.abort()
    await reader
    await rt.stop(h)
  })

  it('a followed log ends when the harness exits', async () => {
    const h = await rt.start(spec({command: ['/bin/sh', '-c', 'sleep 0.3; echo last-words']}))
    let text = ''
    for await (const c of rt.logs(h, {follow: true})) text += c.toString('utf8')
    expect(text).toContain('last-words')
    await rt.stop(h)
  })

  it('sendKeys: a literal then Enter runs; named keys are checked', async () => {
    const h = await rt.start(spec())
    await typeLine(h, 'echo sum=$((2+3))')
    await screenHas(h, 'sum=5')
    await rt.sendKeys(h, {literal: 'echo semi;'})
    await rt.sendKeys(h, {key: 'enter'})
    await screenHas(h, '\nsemi\n')
    await expect(rt.sendKeys(h, {key: 'kill-server'})).rejects.toThrow(/unknown key/)
    await rt.stop(h)
  })

  it('C-c interrupts a running sleep', async () => {
    const h = await rt.start(spec())
    await typeLine(h, 'echo started; sleep 100')
    await screenHas(h, '\nstarted')
    await rt.sendKeys(h, {key: 'C-c'})
    await typeLine(h, 'echo status=$?')
    await screenHas(h, 'status=130')
    await rt.stop(h)
  })

  it('paste delivers multi-line text as one bracketed paste, then Enter', async () => {
    const out = join(dir, 'pasted.bin')
    // The program asks for bracketed paste (as harness TUIs do) and records raw input bytes.
    const h = await rt.start(spec({command: ['/bin/bash', '--noprofile', '--norc', '-c', `printf '\\033[?2004h'; stty raw -echo; exec cat > '${out}'`]}))
    await waitFor('raw mode', async () => (await runCommand('tmux', ['-L', 'svc', 'display-message', '-p', '-t', `=${h.ref}:`, '#{pane_current_command}'], {env})).stdout.toString().trim() === 'cat')
    await rt.paste(h, 'line one\nline two')
    const got = await waitFor('the pasted bytes', async () => {
      const b = existsSync(out) ? await readFile(out, 'latin1') : ''
      return b.endsWith('\r') && b.includes('\x1b[201~') ? b : undefined
    })
    expect(got).toBe('\x1b[200~line one\rline two\x1b[201~\r')
    await rt.stop(h)
  })

  it('attach: the screen first, then typed input and its output; close leaves the session', async () => {
    const h = await rt.start(spec())
    await typeLine(h, 'echo before-attach')
    await screenHas(h, '\nbefore-attach')
    const t = await rt.attach(h, {cols: 100, rows: 30})
    const c = collect(t)
    await c.until('before-attach')
    expect(c.chunks[0].toString('utf8').startsWith('\x1b[0m\x1b[H\x1b[2J')).toBe(true)
    expect(c.chunks[0].toString('utf8')).toContain('before-attach')
    await t.write(Buffer.from('echo hi-$((6*7))\r'))
    await c.until('hi-42')
    const size = await runCommand('tmux', ['-L', 'svc', 'display-message', '-p', '-t', `=${h.ref}:`, '#{window_width}x#{window_height}'], {env})
    expect(size.stdout.toString().trim()).toBe('100x30')
    await t.resize(90, 20)
    await waitFor('the resize', async () => (await runCommand('tmux', ['-L', 'svc', 'display-message', '-p', '-t', `=${h.ref}:`, '#{window_width}x#{window_height}'], {env})).stdout.toString().trim() === '90x20')

    let closed = false
    t.onClose(() => (closed = true))
    await t.close()
    expect(closed).toBe(true)
    expect(await rt.isRunning(h)).toBe(true)
    const clients = await runCommand('tmux', ['-L', 'svc', 'list-clients', '-t', `=${h.ref}`], {env})
    expect(clients.stdout.toString().trim()).toBe('')
    await rt.stop(h)
  })

  it('two attaches at once both see the output; control characters arrive as typed', async () => {
    const h = await rt.start(spec())
    const [a, b] = await Promise.all([rt.attach(h, {cols: 80, rows: 24}), rt.attach(h, {cols: 80, rows: 24})])
    const ca = collect(a)
    const cb = collect(b)
    await a.write(Buffer.from('sleep 100\r'))
    await waitFor('sleep to run', async () => (await runCommand('tmux', ['-L', 'svc', 'display-message', '-p', '-t', `=${h.ref}:`, '#{pane_current_command}'], {env})).stdout.toString().trim() === 'sleep')
    await b.write(Buffer.from([0x03]))
    await b.write(Buffer.from('echo both-$?\r'))
    await ca.until('both-130')
    await cb.until('both-130')
    await Promise.all([a.close(), b.close()])
    expect(await rt.isRunning(h)).toBe(true)
    await rt.stop(h)
  })

  it('an attached stream closes when the session is stopped', async () => {
    const h = await rt.start(spec())
    const t = await rt.attach(h, {cols: 80, rows: 24})
    const closed = new Promise<void>((resolve) => t.onClose(resolve))
    await rt.stop(h)
    await closed
    await expect(t.write(Buffer.from('x'))).rejects.toThrow(/closed/)
  })

  it('attach fails clearly when there is no session', async () => {
    await expect(rt.attach({runtime: 'local', ref: 'svc-missing'}, {cols: 80, rows: 24})).rejects.toThrow(/does not exist/)
  })

  it('stop removes the session and its log, and is idempotent', async () => {
    const h = await rt.start(spec())
    expect(existsSync(rt.logFile(h.ref))).toBe(true)
    await rt.stop(h)
    expect((await runCommand('tmux', ['-L', 'svc', 'has-session', '-t', `=${h.ref}`], {env})).code).not.toBe(0)
    expect(existsSync(rt.logFile(h.ref))).toBe(false)
    expect(await rt.isRunning(h)).toBe(false)
    await rt.stop(h)
    await expect(rt.sendKeys(h, {literal: 'x'})).rejects.toThrow(/does not exist/)
  })

  it('a harness that exited leaves a dead pane: not running, terminal not ready', async () => {
    const h = await rt.start(spec({command: ['/bin/sh', '-c', 'echo bye']}))
    await waitFor('the harness to exit', async () => !(await rt.terminalReady(h)))
    expect(await rt.isRunning(h)).toBe(false)
    await expect(rt.sendKeys(h, {literal: 'x'})).rejects.toThrow(/has exited/)
    await rt.stop(h)
  })
})
