import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {privateAddressKind, privateTargetOf} from '../../api/webhook-targets.js'
import {checkLiteral, guardedLookup, PrivateTargetError, type Resolver} from './webhook-guard.js'
import {postJson} from './webhook-post.js'

describe('private addresses', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.255', 'shared (CGNAT)'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['255.255.255.255', 'multicast or reserved'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fc00::1', 'private (unique local)'],
    ['fdff:ffff::1', 'private (unique local)'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:c0a8:0101::1', 'private'],
    ['[::1]', 'loopback'],
  ])('%s is %s', (ip, kind) => {
    expect(privateAddressKind(ip)).toBe(kind)
  })

  it.each(['8.8.8.8', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '169.253.0.1', '192.169.0.1', '11.0.0.1', '2001:db8::1', '2606:4700::1111', '::ffff:8.8.8.8', '2002:0808:0808::1', 'example.com'])('%s is public (or not an address)', (ip) => {
    expect(privateAddressKind(ip)).toBeNull()
  })

  it('URLs: literals in any spelling, localhost and *.localhost; a public name passes', () => {
    for (const url of ['http://2130706433/', 'http://0x7f000001/', 'http://127.1/', 'http://[::ffff:127.0.0.1]:80/', 'http://localhost./', 'http://a.b.LOCALHOST/']) expect(privateTargetOf(url), url).not.toBeNull()
    for (const url of ['https://hooks.slack.com/services/x', 'http://localhost.example.com/', 'not a url']) expect(privateTargetOf(url), url).toBeNull()
    expect(() => checkLiteral('http://127.0.0.1:1/x', false)).toThrow(PrivateTargetError)
    expect(() => checkLiteral('http://127.0.0.1:1/x', true)).not.toThrow()
  })
})

describe('delivery: the resolved address is checked and the connection pinned to it', () => {
  let server: http.Server
  let port = 0
  const hits: string[] = []
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.headers.host ?? '')
      req.resume()
      req.on('end', () => res.writeHead(204).end())
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    port = (server.address() as AddressInfo).port
  })
  afterAll(() => new Promise<void>((r) => server.close(() => r())))

  /** A resolver that answers `answers` in turn (the last one repeated) and counts the questions. */
  const rebinding = (...answers: string[][]) => {
    const asked: string[] = []
    const resolve: Resolver = (name, cb) => {
      asked.push(name)
      const list = answers[Math.min(asked.length - 1, answers.length - 1)]
      setImmediate(() => cb(null, list.map((address) => ({address, family: address.includes(':') ? 6 : 4}))))
    }
    return {resolve, asked}
  }

  it('a name answering a private address is refused before any connection', async () => {
    const r = rebinding(['127.0.0.1'])
    await expect(postJson(`http://rebind.invalid:${port}/x`, '{}', {}, 5000, guardedLookup(false, r.resolve))).rejects.toThrow(/rebind\.invalid resolves to a loopback address \(127\.0\.0\.1\)/)
    expect(hits).toEqual([])
  })

  it('a name answering a public and a private address is refused (any private answer refuses)', async () => {
    const r = rebinding(['203.0.113.9', '::1'])
    await expect(postJson(`http://rebind.invalid:${port}/x`, '{}', {}, 5000, guardedLookup(false, r.resolve))).rejects.toThrow(/loopback address \(::1\)/)
    expect(hits).toEqual([])
  })

  it('allowed, the connection goes to the address checked, asked once (a name no real resolver knows)', async () => {
    // A second question would be answered with a public address that does not serve: only a
    // connection pinned to the first answer reaches the receiver.
    const r = rebinding(['127.0.0.1'], ['203.0.113.9'])
    const res = await postJson(`http://pinned.invalid:${port}/x`, '{}', {}, 5000, guardedLookup(true, r.resolve))
    expect(res.status).toBe(204)
    expect(r.asked).toEqual(['pinned.invalid'])
    expect(hits).toEqual([`pinned.invalid:${port}`])
  })
})
