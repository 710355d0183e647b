import {chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

/**
 * A standalone broker's identity. It is the deployment's, not one URL's: the broker's ID and
 * secret live in the shared database, so they are valid on every replica. `hubUrls` are the
 * URLs it was last given (`hubUrl`, the first, is kept for identities written before).
 */
export interface BrokerIdentity {
  hubUrl: string
  hubUrls?: string[]
  brokerId: string
  secret: string
}

/** The URLs an identity was given. */
export const identityUrls = (id: BrokerIdentity): string[] => (id.hubUrls?.length ? id.hubUrls : [id.hubUrl])

/** A standalone broker's identity, kept in `<stateDir>/identity.json` (mode 0600). */
export function loadIdentity(stateDir: string): BrokerIdentity | null {
  try {
    const id = JSON.parse(readFileSync(join(stateDir, 'identity.json'), 'utf8')) as BrokerIdentity
    return id.brokerId && id.secret && id.hubUrl ? id : null
  } catch {
    return null
  }
}

export function saveIdentity(stateDir: string, id: BrokerIdentity): void {
  mkdirSync(stateDir, {recursive: true, mode: 0o700})
  const file = join(stateDir, 'identity.json')
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(id, null, 2) + '\n', {mode: 0o600})
  renameSync(tmp, file)
  chmodSync(file, 0o600)
}

/**
 * A broker's default state directory: `<home>/.svc/broker-<host of the first URL>`, unless that
 * of another given URL already holds an identity (the same broker, started with its list in
 * another order or with a URL added).
 */
export function defaultStateDir(home: string, hubUrls: string[]): string {
  const dirs = hubUrls.map((u) => join(home, '.svc', `broker-${new URL(u).host.replace(/[^A-Za-z0-9.-]/g, '_')}`))
  return dirs.find((d) => existsSync(join(d, 'identity.json'))) ?? dirs[0]
}
