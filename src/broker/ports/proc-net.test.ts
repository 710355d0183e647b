import {describe, expect, it} from 'vitest'
import {connectAddress, parseTcpTable} from './proc-net.js'

const HEAD = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n'

describe('parseTcpTable', () => {
  it('reads listening IPv4 sockets and skips connections', () => {
    const text =
      HEAD +
      '   0: 0100007F:4E20 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0000000000000000 100 0 0 10 0\n' +
      '   1: 00000000:4E21 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2222 1 0000000000000000 100 0 0 10 0\n' +
      '   2: 0100007F:4E20 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 3333 1 0000000000000000 20 4 30 10 -1\n'
    expect(parseTcpTable(text, 4)).toEqual([
      {address: '127.0.0.1', port: 20000, family: 4, inode: 1111},
      {address: '0.0.0.0', port: 20001, family: 4, inode: 2222},
    ])
  })

  it('reads IPv6 wildcard, loopback and IPv4-mapped listeners', () => {
    const text =
      HEAD +
      '   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 10 1 0 100 0 0 10 0\n' +
      '   1: 00000000000000000000000001000000:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 11 1 0 100 0 0 10 0\n' +
      '   2: 0000000000000000FFFF00000100007F:1F92 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12 1 0 100 0 0 10 0\n'
    expect(parseTcpTable(text, 6).map((l) => [l.address, l.port, l.family])).toEqual([
      ['::', 8080, 6],
      ['::1', 8081, 6],
      ['127.0.0.1', 8082, 4],
    ])
  })

  it('connects to loopback for a wildcard, IPv4 first', () => {
    const ls = [
      {address: '::', port: 80, family: 6 as const, inode: 1},
      {address: '0.0.0.0', port: 80, family: 4 as const, inode: 2},
      {address: '::1', port: 81, family: 6 as const, inode: 3},
    ]
    expect(connectAddress(ls, 80)).toBe('127.0.0.1')
    expect(connectAddress(ls, 81)).toBe('::1')
    expect(connectAddress(ls, 82)).toBeUndefined()
  })
})
