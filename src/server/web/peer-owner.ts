import {readFile} from 'node:fs/promises'

/**
 * The OS user that owns the client end of a loopback TCP connection, read from the kernel's
 * socket tables (Linux `/proc/net/tcp` and `/proc/net/tcp6`). Dev sign-in hands out the dev
 * user's session, which the dev credential file guards with mode 0600; without this check any
 * other account on the machine could get it through loopback. Returns null when the tables
 * cannot be read (not Linux) or the connection is not found.
 */
export async function loopbackPeerUid(clientPort: number, serverPort: number, tables = ['/proc/net/tcp', '/proc/net/tcp6']): Promise<number | null> {
  for (const table of tables) {
    let text: string
    try {
      text = await readFile(table, 'utf8')
    } catch {
      continue
    }
    const uid = findOwner(text, clientPort, serverPort)
    if (uid !== null) return uid
  }
  return null
}

/**
 * In a socket table the client's socket is the line whose local port is the client's port and
 * whose remote port is the server's (ports are hex). Columns: sl, local, remote, state, queues,
 * timer, retransmits, uid, ...
 */
export function findOwner(table: string, clientPort: number, serverPort: number): number | null {
  for (const line of table.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/)
    if (cols.length < 8) continue
    const local = parseInt(cols[1].split(':').pop() ?? '', 16)
    const remote = parseInt(cols[2].split(':').pop() ?? '', 16)
    if (local === clientPort && remote === serverPort) return Number(cols[7])
  }
  return null
}
