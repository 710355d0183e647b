import {chmod, mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {DEFAULT_RESOURCES, type AgentSpec, type RuntimeHandle} from '../runtime.js'
import {attachArgs, ContainerCliRuntime, containerScript, inContainerCommand, execTmuxArgs, globalArgs, inspectRunningArgs, logsArgs, probeArgs, resourceArgs, runArgs, stopArgs} from './container-cli.js'
import {cappedNproc, hardLimits, mountArgs, podmanEngineFlags} from './container-host.js'
import {DockerRuntime} from './docker.js'
import {PodmanRuntime} from './podman.js'
import {runCommand} from './run-command.js'

const spec: AgentSpec = {
  agentId: 'a1',
  name: 'alpha',
  projectId: 'p1',
  command: ['claude', '--x', 'task;'],
  env: {SVC_AUTH_TOKEN: 'secret token', PATH: '/usr/bin', WEIRD: '$(rm -rf /); "q"'},
  image: 'reg/claude:1',
  workdir: '/workspace',
  resources: {cpu: '500m', memory: '2Gi', disk: '10Gi', gpu: 1},
}

describe('container CLI argv (pure)', () => {
  it('run: name, labels, env names only (values in the CLI env), resources, -it, harness in tmux', () => {
    const plan = runArgs(spec, {cols: 120, rows: 40})
    expect(plan.args).toEqual([
      'run', '-d', '--name', 'svc-a1', '--label', 'svc.agent=a1', '--label', 'svc.project=p1',
      '-e', 'SVC_AUTH_TOKEN', '-e', 'PATH=/usr/bin', '-e', 'WEIRD',
      '--cpus', '0.5', '--memory', '2147483648', '--gpus', '1', '-w', '/workspace',
      'reg/claude:1', '/bin/sh', '-c', containerScript({cols: 120, rows: 40}), 'svc-harness', 'claude', '--x', 'task\\;',
    ])
    expect(plan.env).toEqual({SVC_AUTH_TOKEN: 'secret token', WEIRD: '$(rm -rf /); "q"'})
    expect(() => runArgs({...spec, image: undefined}, {cols: 1, rows: 1})).toThrow(/no container image/)
    expect(() => runArgs({...spec, env: {'BAD KEY': 'x'}}, {cols: 1, rows: 1})).toThrow(/not valid/)
    expect(resourceArgs(DEFAULT_RESOURCES)).toEqual(['--cpus', '1', '--memory', '2147483648'])
  })

  it('run with the host plan: host network and limits, the agent\'s paths mounted at their host paths, svc first on PATH', () => {
    const host = {mounts: [{path: '/opt/svc', readOnly: true}, {path: '/work/wt/a1', readOnly: false}], flags: ['--network', 'host', '--ulimit', 'nofile=20000:20000'], env: {PATH: '/state/bin:/usr/bin', HOME: '/state/homes/a1'}}
    const plan = runArgs({...spec, env: {SVC_AUTH_TOKEN: 't'}}, {cols: 80, rows: 24}, host)
    expect(plan.args.slice(8, plan.args.indexOf('reg/claude:1'))).toEqual([
      '-e', 'SVC_AUTH_TOKEN', '-e', 'PATH=/state/bin:/usr/bin', '-e', 'HOME=/state/homes/a1',
      '--cpus', '0.5', '--memory', '2147483648', '--gpus', '1',
      '--network', 'host', '--ulimit', 'nofile=20000:20000', '-v', '/opt/svc:/opt/svc:ro', '-v', '/work/wt/a1:/work/wt/a1',
      '-w', '/workspace',
    ])
    expect(() => mountArgs([{path: '/a:b', readOnly: true}])).toThrow(/without ':' or ','/)
    expect(hardLimits('Limit                     Soft Limit           Hard Limit           Units\nMax processes             96364                96364                processes\nMax open files            1024                 20000                files\n')).toEqual({nofile: 20000, nproc: 96364})
    expect(hardLimits('Max open files            unlimited            unlimited            files\n')).toEqual({nofile: undefined, nproc: undefined})
    expect(cappedNproc(96364, 32768)).toBe(32768)
    expect(cappedNproc(1000, 32768)).toBe(1000)
    expect(cappedNproc(undefined, 32768)).toBe(32768)
    expect(podmanEngineFlags({PATH: '/nonexistent'}, false)).toEqual(['--cgroup-manager', 'cgroupfs'])
    expect(podmanEngineFlags({PATH: '/nonexistent'}, true)).toEqual([])
  })

  it('the other operations', () => {
    expect(globalArgs('docker', 'unix:///run/d.sock')).toEqual(['--host', 'unix:///run/d.sock'])
    expect(globalArgs('podman', 'tcp://h:1')).toEqual(['--url', 'tcp://h:1'])
    expect(globalArgs('docker')).toEqual([])
    expect(probeArgs('docker')).toEqual(['version', '--format', '{{.Server.Version}}'])
    expect(probeArgs('podman')).toEqual(['info', '--format', '{{.Host.Arch}}'])
    expect(stopArgs('svc-a1')).toEqual(['rm', '-f', 'svc-a1'])
    expect(inspectRunningArgs('svc-a1')).toEqual(['inspect', '--format', '{{.State.Running}}', 'svc-a1'])
    expect(logsArgs('svc-a1', true)).toEqual(['logs', '--follow', 'svc-a1'])
    expect(logsArgs('svc-a1', false)).toEqual(['logs', 'svc-a1'])
    expect(execTmuxArgs('svc-a1', ['send-keys', '-t', '=svc:', 'Enter'])).toEqual(['exec', '-e', 'TERM=xterm-256color', 'svc-a1', 'tmux', 'send-keys', '-t', '=svc:', 'Enter'])
    expect(attachArgs('svc-a1')).toEqual(['exec', '-i', '-e', 'TERM=xterm-256color', 'svc-a1', 'tmux', '-C', 'attach-session', '-t', '=svc'])
  })
})

describe('the container main process (run here, as a container would run it)', () => {
  it('runs the harness in tmux session svc, copies its output to stdout, ends with it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-pid1-'))
    const env: NodeJS.ProcessEnv = {...process.env, TMUX_TMPDIR: dir}
    delete env.TMUX
    try {
      const [file, ...args] = inContainerCommand(['/bin/bash', '-c', 'echo "hello $1"; sleep 0.5; echo bye', 'x', 'world;'], {cols: 100, rows: 30})
      const r = await runCommand(file, args, {env, timeoutMs: 20_000})
      expect(r).toMatchObject({code: 0, stderr: ''})
      const out = r.stdout.toString()
      expect(out).toContain('hello world;')
      expect(out).toContain('bye')
      expect((await runCommand('tmux', ['has-session', '-t', '=svc'], {env})).code).not.toBe(0)
    } finally {
      await runCommand('tmux', ['kill-server'], {env})
      await rm(dir, {recursive: true, force: true})
    }
  })
})

describe('container engines on this machine', () => {
  it('a docker CLI without an engine is not available; a missing podman is not available', {timeout: 120_000}, async () => {
    expect(await new DockerRuntime({probeTimeoutMs: 10_000}).available()).toBe(false)
    expect(await new PodmanRuntime({bin: 'no-such-podman-binary'}).available()).toBe(false)
    // Whatever is installed here, a podman that answers must have an engine behind it.
    const podman = await runCommand('podman', ['info'], {}).catch(() => undefined)
    expect(await new PodmanRuntime({probeTimeoutMs: 60_000}).available()).toBe(podman?.code === 0)
  })
})

// A stand-in docker CLI: records its argv, runs `exec ... tmux` against a real local tmux
// server (the test's TMUX_TMPDIR), so keys, paste and attach go through the real path.
const FAKE = `#!/bin/bash
printf '%s\\n' "$*" >> "$FAKE_LOG"
case "$1" in
  run) printf '%s' "$SVC_AUTH_TOKEN" > "$FAKE_DIR/run-env"; echo cid; exit 0;;
  inspect) [ "$4" = svc-gone ] && { echo "Error: No such object: $4" >&2; exit 1; }; echo true; exit 0;;
  rm) [ "$3" = svc-gone ] && { echo "Error response from daemon: No such container: $3" >&2; exit 1; }; exit 0;;
  logs) echo "log line 1"; [ "$2" = --follow ] && exec sleep 30; exit 0;;
  version) echo "Cannot connect to the Docker daemon" >&2; exit 1;;
  exec) shift; while [ "\${1#-}" != "$1" ]; do if [ "$1" = -e ]; then shift 2; else shift; fi; done; shift; exec "$@";;
esac
echo "unexpected: $*" >&2; exit 2
`

describe('container CLI runtime against a stand-in CLI and real tmux', () => {
  let dir: string
  let env: NodeJS.ProcessEnv
  let rt: ContainerCliRuntime
  const h: RuntimeHandle = {runtime: 'docker', ref: 'svc-a1'}

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-ctr-'))
    await writeFile(join(dir, 'docker'), FAKE)
    await chmod(join(dir, 'docker'), 0o755)
    env = {...process.env, TMUX_TMPDIR: dir, FAKE_LOG: join(dir, 'argv.log'), FAKE_DIR: dir}
    delete env.TMUX
    rt = new DockerRuntime({bin: join(dir, 'docker'), env})
    // The "container's" tmux session, as the image's tmux would hold it.
    await runCommand('tmux', ['new-session', '-d', '-s', 'svc', '-x', '80', '-y', '24', '-e', 'PS1=$ ', '--', '/bin/bash', '--noprofile', '--norc', '-i'], {env})
  })

  afterAll(async () => {
    await runCommand('tmux', ['kill-server'], {env})
    await rm(dir, {recursive: true, force: true})
  })

  const screen = async () => (await runCommand('tmux', ['capture-pane', '-p', '-t', '=svc:'], {env})).stdout.toString()
  async function until(what: string, f: () => Promise<boolean>) {
    for (let i = 0; i < 200; i++) {
      if (await f()) return
      await new Promise((r) => setTimeout(r, 50))
    }
    throw new Error(`timed out waiting for ${what}`)
  }

  it('start hands secrets through the environment, not argv', async () => {
    expect(await rt.start(spec)).toEqual({runtime: 'docker', ref: 'svc-a1', image: 'reg/claude:1', sandbox: 'container'})
    const log = await readFile(join(dir, 'argv.log'), 'utf8')
    expect(log).not.toContain('secret token')
    expect(await readFile(join(dir, 'run-env'), 'utf8')).toBe('secret token')
  })

  it('isRunning, terminalReady, stop (idempotent), logs', async () => {
    expect(await rt.isRunning(h)).toBe(true)
    expect(await rt.terminalReady(h)).toBe(true)
    expect(await rt.isRunning({runtime: 'docker', ref: 'svc-gone'})).toBe(false)
    await rt.stop(h)
    await rt.stop({runtime: 'docker', ref: 'svc-gone'})
    let text = ''
    for await (const c of rt.logs(h, {follow: false})) text += c.toString()
    expect(text).toBe('log line 1\n')
    const ac = new AbortController()
    text = ''
    for await (const c of rt.logs(h, {follow: true, signal: ac.signal})) {
      text += c.toString()
      ac.abort()
    }
    expect(text).toBe('log line 1\n')
    await expect(rt.isRunning({runtime: 'local', ref: 'svc-a1'})).rejects.toThrow(/local handle was given to the docker runtime/)
  })

  it('sendKeys, paste and capture run tmux in the container', async () => {
    await rt.sendKeys(h, {literal: 'echo ctr-$((1+1))'})
    await rt.sendKeys(h, {key: 'Enter'})
    await until('keys output', async () => (await screen()).includes('ctr-2'))
    await rt.paste(h, 'echo pasted-$((2+2))')
    await until('paste output', async () => (await screen()).includes('pasted-4'))
    // capture reads the same screen through exec (what a message's Enter waits on).
    expect(await rt.capture(h)).toContain('pasted-4')
  })

  it('attach is a control-mode client over exec -i', async () => {
    const t = await rt.attach(h, {cols: 80, rows: 24})
    const chunks: Buffer[] = []
    t.onData((c) => chunks.push(c))
    await until('the initial screen', async () => Buffer.concat(chunks).toString().includes('pasted-4'))
    await t.write(Buffer.from('echo via-attach-$((3+3))\r'))
    await until('attach output', async () => Buffer.concat(chunks).toString().includes('via-attach-6'))
    await t.close()
    expect((await runCommand('tmux', ['has-session', '-t', '=svc'], {env})).code).toBe(0)
  })

  it('attach fails clearly when the container has no tmux session', async () => {
    await runCommand('tmux', ['new-session', '-d', '-s', 'other', '--', 'sleep', '100'], {env})
    await runCommand('tmux', ['kill-session', '-t', '=svc'], {env})
    await expect(rt.attach(h, {cols: 80, rows: 24})).rejects.toThrow(/attaching to svc-a1 failed \(the image must provide tmux\): tmux: can't find session/)
    await runCommand('tmux', ['kill-server'], {env})
    // kill-server returns before the server has gone: an attach meanwhile still reaches it.
    await until('the tmux server gone', async () => /no server running|error connecting/.test((await runCommand('tmux', ['ls'], {env})).stderr.toString()))
    await expect(rt.attach(h, {cols: 80, rows: 24})).rejects.toThrow(/attaching to svc-a1 failed .*(no sessions|no server running|error connecting)/)
  })
})
