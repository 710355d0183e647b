/**
 * The kernel's TCP socket tables (`/proc/<pid>/net/tcp` and `tcp6`, those of the network
 * namespace `<pid>` is in), read as listeners. Pure parsing here; agent-sockets.ts reads them.
 */

export interface TcpListener {
  /** The bound address as text: `0.0.0.0`, `127.0.0.1`, `::`, `::1`, `10.0.0.5`... */
  address: string
  port: number
  family: 4 | 6
  /** The socket's inode (matched against `/proc/<pid>/fd/*` links `socket:[inode]`). */
  inode: number
}

const LISTEN = '0A'

/** `0100007F` -> `127.0.0.1` (the kernel prints each 32-bit word in host order: little-endian here). */
function ipv4(hex: string): string {
  const n = Number.parseInt(hex, 16)
  return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff].join('.')
}

function ipv6(hex: string): string {
  const bytes: number[] = []
  for (let w = 0; w < 4; w++) {
    const word = hex.slice(w * 8, w * 8 + 8)
    for (let b = 3; b >= 0; b--) bytes.push(Number.parseInt(word.slice(b * 2, b * 2 + 2), 16))
  }
  // An IPv4-mapped address (::ffff:a.b.c.d) is that IPv4 address.
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return bytes.slice(12).join('.')
  const groups = Array.from({length: 8}, (_, i) => ((bytes[2 * i] << 8) | bytes[2 * i + 1]).toString(16))
  const text = groups.join(':')
  // The longest run of zero groups becomes `::` (enough for the addresses that matter here).
  const runs = [...text.matchAll(/(?:^|:)0(?::0)+(?::|$)/g)].sort((a, b) => b[0].length - a[0].length)
  if (!runs.length) return text
  const r = runs[0]
  return `${text.slice(0, r.index)}::${text.slice(r.index! + r[0].length)}`.replace(/^:::/, '::').replace(/:::$/, '::')
}

/** The listening sockets of one table's text (`tcp` for IPv4, `tcp6` for IPv6). */
export function parseTcpTable(text: string, family: 4 | 6): TcpListener[] {
  const out: TcpListener[] = []
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/)
    if (f.length < 10 || f[3] !== LISTEN) continue
    const [addr, portHex] = f[1].split(':')
    if (!addr || !portHex) continue
    const address = family === 4 ? ipv4(addr) : ipv6(addr)
    out.push({address, port: Number.parseInt(portHex, 16), family: address.includes(':') ? 6 : 4, inode: Number(f[9])})
  }
  return out
}

export const isAnyAddress = (a: string) => a === '0.0.0.0' || a === '::'
export const isLoopbackAddress = (a: string) => a === '::1' || /^127\./.test(a)

/**
 * Where to connect to reach a listener: its own address, or loopback for a wildcard (`0.0.0.0`
 * -> 127.0.0.1, `::` -> ::1). Among listeners of one port, IPv4 first.
 */
export function connectAddress(listeners: TcpListener[], port: number): string | undefined {
  const on = listeners.filter((l) => l.port === port).sort((a, b) => a.family - b.family)
  const l = on[0]
  if (!l) return undefined
  if (isAnyAddress(l.address)) return l.family === 4 ? '127.0.0.1' : '::1'
  return l.address
}
