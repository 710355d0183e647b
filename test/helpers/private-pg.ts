/**
 * A private PostgreSQL cluster for one test: initdb into a temp dir, its own free port and its
 * own socket directory, started, stopped and restarted with pg_ctl. For tests that take the
 * database away (a restart, an outage), which must never touch the shared server on :5432 that
 * other tests use at the same time.
 *
 * The server binaries come from /usr/lib/postgresql/<version>/bin (the newest). PostgreSQL
 * refuses to run as root: as root the cluster belongs to the `postgres` user (the temp dir is
 * chowned to it) and every pg_ctl runs through `runuser -u postgres --`.
 */
import {execFile, spawnSync} from 'node:child_process'
import {chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {promisify} from 'node:util'
import {freePort} from './cli.js'

const run = promisify(execFile)

/** The newest installed server's bin directory, or null (the test then says why it skips). */
export function postgresBin(): string | null {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a))
  return versions.length ? join(root, versions[0], 'bin') : null
}

export interface PrivatePg {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string
  port: number
  /** `pg_ctl start` (waits until it accepts connections). */
  start(): Promise<void>
  /** `pg_ctl stop -m fast`: connections are cut, new ones refused. */
  stop(): Promise<void>
  /** `pg_ctl restart -m fast`. */
  restart(): Promise<void>
  /** Stops it (immediate) and removes its files. */
  dispose(): Promise<void>
}

const asRoot = process.getuid?.() === 0

export async function createPrivatePg(bin: string): Promise<PrivatePg> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'))
  const data = join(dir, 'data')
  const log = join(dir, 'server.log')
  const port = await freePort()
  let owner: {uid: number; gid: number} | null = null
  if (asRoot) {
    const id = spawnSync('id', ['-u', 'postgres'], {encoding: 'utf8'})
    const gid = spawnSync('id', ['-g', 'postgres'], {encoding: 'utf8'})
    if (id.status !== 0) throw new Error('running as root and there is no postgres user to own the private cluster')
    owner = {uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim())}
    chownSync(dir, owner.uid, owner.gid)
  }
  const argv = (tool: string, args: string[]): [string, string[]] => (owner ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args])
  const pg = async (tool: string, args: string[]) => {
    const [cmd, a] = argv(tool, args)
    try {
      await run(cmd, a, {timeout: 60_000})
    } catch (err) {
      const tail = existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : ''
      throw new Error(`${tool} ${args.join(' ')} failed: ${(err as Error).message}\n${tail}`)
    }
  }
  // Trust on loopback only (listen_addresses), the socket in the cluster's own directory.
  await pg('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions'])
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`
  const ctl = (...args: string[]) => pg('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '60', ...args])
  // A test that dies before its clean-up must not leave the server running.
  const onExit = () => {
    const [cmd, a] = argv('pg_ctl', ['-D', data, 'stop', '-m', 'immediate'])
    spawnSync(cmd, a, {timeout: 10_000})
  }
  process.once('exit', onExit)
  const self: PrivatePg = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start: () => ctl('start', '-o', options),
    stop: () => ctl('stop', '-m', 'fast'),
    restart: () => ctl('restart', '-m', 'fast', '-o', options),
    dispose: async () => {
      process.removeListener('exit', onExit)
      await ctl('stop', '-m', 'immediate').catch(() => {})
      rmSync(dir, {recursive: true, force: true})
    },
  }
  try {
    await self.start()
  } catch (err) {
    await self.dispose()
    throw err
  }
  return self
}
