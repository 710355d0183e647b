import {spawn} from 'node:child_process'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {WebSocketServer} from 'ws'
import type {AgentSpec, RuntimeHandle} from '../runtime.js'
import {containerScript} from './container-cli.js'
import {authHeaders, parseExecStatus, tlsOptions} from './kube-api.js'
import {kubeconfigPaths, loadKubeconfig, resolveKubeTarget} from './kubeconfig.js'
import {envSecretManifest, execPath, KubernetesRuntime, logPath, podManifest, podNameFor, podResources} from './kubernetes.js'
import {runCommand} from './run-command.js'

const spec: AgentSpec = {
  agentId: 'A1_b',
  name: 'alpha',
  projectId: 'p1',
  command: ['claude', 'task'],
  env: {SVC_AGENT_ID: 'A1_b', Q: '"$(x)";'},
  image: 'reg/claude:1',
  workdir: '/workspace',
  resources: {cpu: '500m', memory: '2Gi', disk: '10Gi', gpu: 2},
}

describe('kubernetes requests (pure)', () => {
  it('pod manifest: name, labels, tmux-wrapped command, env, stdin+tty, resources with gpu', () => {
    expect(podNameFor('A1_b')).toBe('svc-a1-b')
    expect(podManifest(spec, {namespace: 'ns1', cols: 120, rows: 40})).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'svc-a1-b', namespace: 'ns1', labels: {'app.kubernetes.io/managed-by': 'svc', 'svc.agent': 'A1_b', 'svc.project': 'p1'}},
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'agent',
            image: 'reg/claude:1',
            command: ['/bin/sh', '-c', containerScript({cols: 120, rows: 40}), 'svc-harness', 'claude', 'task'],
            envFrom: [{secretRef: {name: 'svc-a1-b-env'}}],
            workingDir: '/workspace',
            resources: {
              requests: {cpu: '500m', memory: '2Gi', 'ephemeral-storage': '10Gi'},
              limits: {cpu: '500m', memory: '2Gi', 'ephemeral-storage': '10Gi', 'nvidia.com/gpu': '2'},
            },
          },
        ],
      },
    })
    expect(envSecretManifest(spec, {namespace: 'ns1'})).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {name: 'svc-a1-b-env', namespace: 'ns1', labels: {'app.kubernetes.io/managed-by': 'svc', 'svc.agent': 'A1_b', 'svc.project': 'p1'}},
      type: 'Opaque',
      stringData: {SVC_AGENT_ID: 'A1_b', Q: '"$(x)";'},
    })
    expect(JSON.stringify(podManifest(spec, {namespace: 'n', cols: 1, rows: 1}))).not.toContain('$(x)')
    expect(podResources({cpu: '1', memory: '2Gi', disk: '10Gi', gpu: 0}).limits).not.toHaveProperty('nvidia.com/gpu')
    expect(() => podManifest({...spec, image: undefined}, {namespace: 'n', cols: 1, rows: 1})).toThrow(/no container image/)
    expect(() => podManifest({...spec, projectId: 'not a label'}, {namespace: 'n', cols: 1, rows: 1})).toThrow(/label value/)
  })

  it('paths of logs and exec', () => {
    expect(logPath('ns1', 'svc-a', true)).toBe('/api/v1/namespaces/ns1/pods/svc-a/log?container=agent&follow=true')
    expect(logPath('ns1', 'svc-a', false)).toBe('/api/v1/namespaces/ns1/pods/svc-a/log?container=agent')
    expect(execPath('ns1', 'svc-a', ['tmux', 'send-keys', '-l', '--', 'a b&c=;'], false)).toBe(
      '/api/v1/namespaces/ns1/pods/svc-a/exec?container=agent&stdout=true&stderr=true&command=tmux&command=send-keys&command=-l&command=--&command=a+b%26c%3D%3B',
    )
    expect(execPath('n', 'p', ['x'], true)).toContain('&stdin=true&command=x')
  })

  it('exec status frames', () => {
    expect(parseExecStatus(Buffer.from('{"metadata":{},"status":"Success"}'))).toEqual({exitCode: 0})
    expect(parseExecStatus(Buffer.from(JSON.stringify({status: 'Failure', message: 'command terminated with non-zero exit code', reason: 'NonZeroExitCode', details: {causes: [{reason: 'ExitCode', message: '3'}]}})))).toEqual({
      exitCode: 3,
      message: 'command terminated with non-zero exit code',
    })
    expect(parseExecStatus(undefined).exitCode).toBe(1)
  })
})

describe('kubeconfig', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-kube-'))
    await writeFile(join(dir, 'ca.pem'), 'CA-FROM-FILE')
    await writeFile(
      join(dir, 'config'),
      `apiVersion: v1
kind: Config
current-context: tok
clusters:
- name: c1
  cluster: {server: "https://k8s.example:6443/", certificate-authority: ca.pem}
- name: c2
  cluster: {server: "https://other:443", insecure-skip-tls-verify: true}
users:
- name: u-token
  user: {token: abc123}
- name: u-cert
  user: {client-certificate-data: ${Buffer.from('CERT').toString('base64')}, client-key-data: ${Buffer.from('KEY').toString('base64')}}
- name: u-exec
  user: {exec: {command: gcloud}}
contexts:
- name: tok
  context: {cluster: c1, user: u-token, namespace: team}
- name: cert
  context: {cluster: c2, user: u-cert}
- name: plugin
  context: {cluster: c1, user: u-exec}
`,
    )
  })
  afterAll(() => rm(dir, {recursive: true, force: true}))

  it('finds the files: KUBECONFIG list, else ~/.kube/config', () => {
    expect(kubeconfigPaths({KUBECONFIG: '/a:/b'})).toEqual(['/a', '/b'])
    expect(kubeconfigPaths({HOME: '/home/u'})).toEqual(['/home/u/.kube/config'])
  })

  it('token auth with a CA file, namespace from the context (overridable)', () => {
    const cfg = loadKubeconfig([join(dir, 'missing'), join(dir, 'config')])
    const t = resolveKubeTarget(cfg)
    expect(t).toMatchObject({server: 'https://k8s.example:6443', token: 'abc123', namespace: 'team', insecureSkipTlsVerify: false})
    expect(t.ca?.toString()).toBe('CA-FROM-FILE')
    expect(authHeaders(t)).toEqual({Authorization: 'Bearer abc123'})
    expect(resolveKubeTarget(cfg, {namespace: 'other'}).namespace).toBe('other')
  })

  it('client certificates and insecure-skip-tls-verify', () => {
    const t = resolveKubeTarget(loadKubeconfig([join(dir, 'config')]), {context: 'cert'})
    expect(t.cert?.toString()).toBe('CERT')
    expect(t.key?.toString()).toBe('KEY')
    expect(t.namespace).toBe('default')
    expect(authHeaders(t)).toEqual({})
    expect(tlsOptions(t)).toMatchObject({rejectUnauthorized: false})
  })

  it('clear errors', () => {
    const cfg = loadKubeconfig([join(dir, 'config')])
    expect(() => resolveKubeTarget(cfg, {context: 'nope'})).toThrow('kubeconfig has no context "nope" (have: tok, cert, plugin)')
    expect(() => resolveKubeTarget(cfg, {context: 'plugin'})).toThrow(/exec or auth-provider plugin/)
    expect(() => loadKubeconfig([join(dir, 'none')])).toThrow(/no kubeconfig found/)
  })
})

// A stand-in for the Kubernetes API server: records requests, keeps pods in a map, and serves
// exec over WebSocket (v4.channel.k8s.io) by running the command here, against a real tmux
// server that plays the pod's tmux session.
describe('kubernetes runtime against a stand-in API server', () => {
  let dir: string
  let env: NodeJS.ProcessEnv
  let server: http.Server
  let rt: KubernetesRuntime
  const seen: Array<{method: string; url: string; auth?: string; body?: unknown}> = []
  const pods = new Map<string, {phase: string}>()
  const secrets = new Map<string, Record<string, string>>()
  const h: RuntimeHandle = {runtime: 'kubernetes', ref: 'svc-a1-b'}

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-k8s-'))
    env = {...process.env, TMUX_TMPDIR: dir}
    delete env.TMUX
    await runCommand('tmux', ['new-session', '-d', '-s', 'svc', '-x', '80', '-y', '24', '-e', 'PS1=$ ', '--', '/bin/bash', '--noprofile', '--norc', '-i'], {env})
    server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = []
      for await (const c of req) chunks.push(c as Buffer)
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined
      seen.push({method: req.method!, url: req.url!, auth: req.headers.authorization, body})
      const url = new URL(req.url!, 'http://x')
      const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods(?:\/([^/]+))?(\/log)?$/.exec(url.pathname)
      const send = (status: number, obj: unknown) => {
        res.writeHead(status, {'Content-Type': 'application/json'})
        res.end(JSON.stringify(obj))
      }
      if (req.headers.authorization !== 'Bearer t0k') return send(401, {kind: 'Status', message: 'Unauthorized'})
      if (url.pathname === '/version') return send(200, {gitVersion: 'v1.30.0'})
      const sm = /^\/api\/v1\/namespaces\/team\/secrets(?:\/([^/]+))?$/.exec(url.pathname)
      if (sm) {
        const sname = sm[1] ?? body?.metadata?.name
        if (req.method === 'POST' && secrets.has(sname)) return send(409, {kind: 'Status', message: `secrets "${sname}" already exists`})
        if (req.method === 'POST' || req.method === 'PUT') {
          secrets.set(sname, body.stringData)
          return send(req.method === 'POST' ? 201 : 200, body)
        }
        if (req.method === 'DELETE') return secrets.delete(sname) ? send(200, {status: 'Success'}) : send(404, {kind: 'Status', message: `secrets "${sname}" not found`})
      }
      if (!m || m[1] !== 'team') return send(404, {kind: 'Status', message: 'not found'})
      const [, , name, log] = m
      if (req.method === 'POST' && !name) {
        const n = body.metadata.name
        if (body.spec.containers[0].image === 'bad:image') return send(422, {kind: 'Status', message: 'Pod "x" is invalid'})
        if (pods.has(n)) return send(409, {kind: 'Status', message: `pods "${n}" already exists`})
        pods.set(n, {phase: 'Running'})
        return send(201, body)
      }
      if (!pods.has(name)) return send(404, {kind: 'Status', message: `pods "${name}" not found`})
      if (req.method === 'GET' && log) {
        res.writeHead(200, {'Content-Type': 'text/plain'})
        res.write('line one\n')
        if (url.searchParams.get('follow') !== 'true') return res.end()
        setTimeout(() => res.write('line two\n'), 50)
        return
      }
      if (req.method === 'GET') return send(200, {metadata: {name}, status: {phase: pods.get(name)!.phase}})
      if (req.method === 'DELETE') {
        pods.delete(name)
        return send(200, {kind: 'Status', status: 'Success'})
      }
      send(405, {message: 'method not allowed'})
    })
    const wss = new WebSocketServer({noServer: true, handleProtocols: (p) => (p.has('v4.channel.k8s.io') ? 'v4.channel.k8s.io' : false)})
    server.on('upgrade', (req, socket, head) => {
      const url = new URL(req.url!, 'http://x')
      seen.push({method: 'EXEC', url: req.url!, auth: req.headers.authorization})
      if (!/\/pods\/[^/]+\/exec$/.test(url.pathname) || req.headers.authorization !== 'Bearer t0k') {
        socket.end('HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n\r\n{"message":"exec forbidden"}')
        return
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        const [cmd, ...args] = url.searchParams.getAll('command')
        const child = spawn(cmd, args, {env, stdio: ['pipe', 'pipe', 'pipe']})
        child.stdin.on('error', () => {})
        ws.on('message', (d: Buffer) => d[0] === 0 && child.stdin.write(d.subarray(1)))
        ws.on('close', () => child.kill())
        child.stdout.on('data', (c: Buffer) => ws.send(Buffer.concat([Buffer.from([1]), c])))
        child.stderr.on('data', (c: Buffer) => ws.send(Buffer.concat([Buffer.from([2]), c])))
        child.on('close', (code) => {
          const st = code === 0 ? {status: 'Success'} : {status: 'Failure', message: 'non-zero exit', details: {causes: [{reason: 'ExitCode', message: String(code)}]}}
          ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(st))]))
          ws.close()
        })
      })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const port = (server.address() as AddressInfo).port
    rt = new KubernetesRuntime({target: {server: `http://127.0.0.1:${port}`, token: 't0k', insecureSkipTlsVerify: false, namespace: 'team'}})
  })

  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
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

  it('available, start (POST with token and manifest), conflict, isRunning', async () => {
    expect(await rt.available()).toBe(true)
    expect(await rt.start(spec)).toEqual(h)
    const posts = seen.filter((s) => s.method === 'POST')
    expect(posts.map((p) => p.url)).toEqual(['/api/v1/namespaces/team/secrets', '/api/v1/namespaces/team/pods'])
    expect(posts[1].auth).toBe('Bearer t0k')
    expect(posts[1].body).toEqual(podManifest(spec, {namespace: 'team', cols: 200, rows: 50}))
    expect(secrets.get('svc-a1-b-env')).toEqual(spec.env)
    await expect(rt.start(spec)).rejects.toThrow(/already has a pod/)
    expect(seen.filter((s) => s.method === 'PUT').map((p) => p.url)).toEqual(['/api/v1/namespaces/team/secrets/svc-a1-b-env'])
    await expect(rt.start({...spec, agentId: 'b2', image: 'bad:image'})).rejects.toThrow('creating the pod of agent b2 failed: HTTP 422: Pod "x" is invalid')
    expect(secrets.has('svc-b2-env')).toBe(false)
    expect(await rt.isRunning(h)).toBe(true)
    expect(await rt.isRunning({runtime: 'kubernetes', ref: 'svc-nope'})).toBe(false)
  })

  it('logs: so far, and followed until aborted', async () => {
    let text = ''
    for await (const c of rt.logs(h, {follow: false})) text += c.toString()
    expect(text).toBe('line one\n')
    const ac = new AbortController()
    text = ''
    for await (const c of rt.logs(h, {follow: true, signal: ac.signal})) {
      text += c.toString()
      if (text.includes('line two')) ac.abort()
    }
    expect(text).toBe('line one\nline two\n')
    await expect(async () => {
      for await (const _ of rt.logs({runtime: 'kubernetes', ref: 'svc-nope'}, {follow: false})) void _
    }).rejects.toThrow(/pods "svc-nope" not found/)
  })

  it('terminalReady, sendKeys, paste and capture run tmux through exec', async () => {
    expect(await rt.terminalReady(h)).toBe(true)
    await rt.sendKeys(h, {literal: 'echo k8s-$((5+5))'})
    await rt.sendKeys(h, {key: 'Enter'})
    await until('keys output', async () => (await screen()).includes('k8s-10'))
    await rt.paste(h, 'echo pasted;')
    await until('paste output', async () => /\npasted\n/.test(await screen()))
    const exec = seen.filter((s) => s.method === 'EXEC').at(-1)!
    expect(exec.url).toMatch(/^\/api\/v1\/namespaces\/team\/pods\/svc-a1-b\/exec\?container=agent&stdout=true&stderr=true&command=tmux&command=send-keys/)
    // capture reads the same screen through exec (what a message's Enter waits on).
    expect(await rt.capture(h)).toMatch(/\npasted\n/)
    await expect(rt.sendKeys(h, {key: 'nope'})).rejects.toThrow(/unknown key/)
  })

  it('attach: a control-mode client over the exec WebSocket', async () => {
    const t = await rt.attach(h, {cols: 80, rows: 24})
    const chunks: Buffer[] = []
    t.onData((c) => chunks.push(c))
    await until('the initial screen', async () => Buffer.concat(chunks).toString().includes('k8s-10'))
    await t.write(Buffer.from('echo over-ws-$((4+4))\r'))
    await until('attach output', async () => Buffer.concat(chunks).toString().includes('over-ws-8'))
    await t.close()
    expect((await runCommand('tmux', ['has-session', '-t', '=svc'], {env})).code).toBe(0)
  })

  it('stop deletes the pod and is idempotent; a refused token is a clear error', async () => {
    await rt.stop(h)
    expect(await rt.isRunning(h)).toBe(false)
    expect(secrets.size).toBe(0)
    await rt.stop(h)
    const port = (server.address() as AddressInfo).port
    const bad = new KubernetesRuntime({target: {server: `http://127.0.0.1:${port}`, token: 'wrong', insecureSkipTlsVerify: false, namespace: 'team'}})
    expect(await bad.available()).toBe(false)
    await expect(bad.start(spec)).rejects.toThrow('creating the env Secret of agent A1_b failed: HTTP 401: Unauthorized')
    await expect(bad.sendKeys(h, {key: 'Enter'})).rejects.toThrow(/exec refused: HTTP 403: exec forbidden/)
  })
})
