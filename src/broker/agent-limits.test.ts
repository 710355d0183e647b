import {lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {agentHome, agentTokenFile} from './agent-launch.js'
import {AgentLimits} from './agent-limits.js'

const HOUR = 60 * 60 * 1000

/**
 * The broker's token refresh against a Hub stand-in on 127.0.0.1 (the Hub's side of
 * `POST /agents/:id/token/refresh` is tested with the real Hub in agents-api.test.ts): it answers
 * a fresh token for the bearer it was given, or `status`.
 */
describe('AgentLimits: an agent token file near its expiry is refreshed', () => {
  let dir: string
  let server: Server
  let url: string
  let status = 200
  const seen: string[] = []
  const errors: string[] = []
  let limits: AgentLimits

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-limits-'))
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization}`)
      req.resume()
      req.on('end', () => res.writeHead(status, {'content-type': 'application/json'}).end(status === 200 ? JSON.stringify({token: 'svc_agt_fresh', expiresAt: 'x'}) : '{"error":{"code":"unauthorized"}}'))
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    limits = new AgentLimits({stateDir: dir, hubUrl: url, onDeadline: () => {}, onError: (id, m) => errors.push(`${id}: ${m}`)})
  })
  afterEach(async () => {
    limits.stop()
    seen.length = 0
    errors.length = 0
    status = 200
    await new Promise((r) => server.close(r))
    rmSync(dir, {recursive: true, force: true})
  })

  const tokenFile = (id: string, token: string, ageMs: number) => {
    const file = agentTokenFile(agentHome(dir, id))
    mkdirSync(join(agentHome(dir, id), '.svc'), {recursive: true})
    writeFileSync(file, token + '\n')
    const t = (Date.now() - ageMs) / 1000
    utimesSync(file, t, t)
    limits.track(id)
    return file
  }

  it('refreshes a file older than 13 h with its own token, and leaves a younger one alone', async () => {
    const old = tokenFile('a1', 'svc_agt_old', 14 * HOUR)
    const young = tokenFile('a2', 'svc_agt_young', 2 * HOUR)
    await limits.refreshTokens()
    expect(seen).toEqual(['POST /api/v1/agents/a1/token/refresh Bearer svc_agt_old'])
    expect(readFileSync(old, 'utf8')).toBe('svc_agt_fresh\n')
    expect(readFileSync(young, 'utf8')).toBe('svc_agt_young\n')
    expect(errors).toEqual([])
  })

  it('a refused refresh is reported and keeps the token it had', async () => {
    status = 401
    const old = tokenFile('a1', 'svc_agt_old', 14 * HOUR)
    await limits.refreshTokens()
    expect(readFileSync(old, 'utf8')).toBe('svc_agt_old\n')
    expect(errors).toEqual([`a1: refreshing the agent's token failed: the Hub answered 401: {"error":{"code":"unauthorized"}}`])
  })

  it('a token file the running agent replaced by a link to a host file: the host file is neither sent nor written', async () => {
    const hostFile = join(dir, 'host-secret')
    writeFileSync(hostFile, 'svc_dev_of_the_hub\n')
    const file = tokenFile('a1', 'svc_agt_old', 14 * HOUR)
    rmSync(file)
    symlinkSync(hostFile, file)
    await limits.refreshTokens()
    expect(seen).toEqual([])
    expect(readFileSync(hostFile, 'utf8')).toBe('svc_dev_of_the_hub\n')
    expect(lstatSync(file, {throwIfNoEntry: false})).toBeUndefined()
    expect(errors).toEqual([`a1: refreshing the agent's token failed: its token file is missing or was replaced`])
  })
})

