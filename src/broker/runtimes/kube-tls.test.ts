import {mkdtemp, readFile, rm} from 'node:fs/promises'
import https from 'node:https'
import type {AddressInfo} from 'node:net'
import type {TLSSocket} from 'node:tls'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {KubeApi} from './kube-api.js'
import type {KubeTarget} from './kubeconfig.js'
import {runChecked} from './run-command.js'

// A stand-in for the Kubernetes API server over TLS: a self-signed certificate made here with
// openssl serves as the server's certificate and as the client certificate it trusts.
describe('kubernetes API client over TLS (stand-in API server)', () => {
  let dir: string
  let server: https.Server
  let cert: Buffer
  let key: Buffer
  let base: string

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-tls-'))
    await runChecked('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], 'making a test certificate')
    cert = await readFile(join(dir, 'cert.pem'))
    key = await readFile(join(dir, 'key.pem'))
    server = https.createServer({cert, key, ca: [cert], requestCert: true, rejectUnauthorized: false}, (req, res) => {
      const s = req.socket as TLSSocket
      res.writeHead(200, {'Content-Type': 'application/json'})
      res.end(JSON.stringify({clientCert: s.authorized, auth: req.headers.authorization ?? null}))
    })
    server.on('upgrade', (_req, socket) => socket.end('HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n\r\n{"message":"no exec for you"}'))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
    await rm(dir, {recursive: true, force: true})
  })

  const target = (t: Partial<KubeTarget>): KubeTarget => ({server: base, insecureSkipTlsVerify: false, namespace: 'default', ...t})

  it('trusts the cluster CA and sends the bearer token', async () => {
    const r = await new KubeApi(target({ca: cert, token: 'tok'})).request('GET', '/version')
    expect(r.json).toEqual({clientCert: false, auth: 'Bearer tok'})
  })

  it('presents a client certificate', async () => {
    const r = await new KubeApi(target({ca: cert, cert, key})).request('GET', '/version')
    expect(r.json).toEqual({clientCert: true, auth: null})
  })

  it('refuses an unknown server certificate unless insecure-skip-tls-verify', async () => {
    await expect(new KubeApi(target({})).request('GET', '/version')).rejects.toThrow(/Kubernetes API GET \/version failed: self[- ]signed certificate/)
    const r = await new KubeApi(target({insecureSkipTlsVerify: true})).request('GET', '/version')
    expect(r.status).toBe(200)
  })

  it('exec WebSocket uses the same TLS settings (wss)', async () => {
    await expect(new KubeApi(target({ca: cert})).exec('/api/v1/namespaces/d/pods/p/exec?command=true')).rejects.toThrow('Kubernetes exec refused: HTTP 403: no exec for you')
  })
})
