import {createHash} from 'node:crypto'
import {existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {homedir} from 'node:os'
import {join} from 'node:path'

/** The SEA asset key of better-sqlite3's native addon (see scripts/build-binary.mjs). */
export const SQLITE_ADDON_ASSET = 'better_sqlite3.node'

/** What `node:sea` offers that we use; absent outside a single-executable application. */
interface Sea {
  isSea(): boolean
  getRawAsset(key: string): ArrayBuffer
}

let loaded: object | undefined

/**
 * better-sqlite3's native addon when svc runs as the single executable, else undefined (the
 * package then finds its own build/Release/better_sqlite3.node as usual).
 *
 * Inside the executable the addon is an embedded asset. A native addon can only be loaded from
 * a file, so it is written once to a per-user cache directory named after its SHA-256
 * (`$XDG_CACHE_HOME/svc/<sha256>/` or `~/.cache/svc/<sha256>/`): a new build of svc with a
 * different addon gets a new directory, and the same build never writes twice. Several processes
 * starting at once each write a private temp file and rename it into place (rename is atomic,
 * and every writer writes the same bytes), and a file already there is used only when its hash
 * matches, so a truncated or altered file is replaced rather than loaded.
 *
 * It returns the loaded addon object rather than a path: the SEA main script's `require` loads
 * built-in modules only, so better-sqlite3 could not `require` a path itself.
 */
export async function sqliteNativeBinding(env: NodeJS.ProcessEnv = process.env): Promise<object | undefined> {
  if (loaded) return loaded
  let sea: Sea
  try {
    sea = (await import('node:sea')) as unknown as Sea
  } catch {
    return undefined // a Node without node:sea is never running as a single executable
  }
  if (!sea.isSea?.()) return undefined
  const bytes = new Uint8Array(sea.getRawAsset(SQLITE_ADDON_ASSET))
  const file = cacheAddon(bytes, addonCacheRoot(env))
  const mod = {exports: {} as object}
  process.dlopen(mod, file)
  loaded = mod.exports
  return loaded
}

/** The per-user cache root: `$XDG_CACHE_HOME/svc`, else `~/.cache/svc`. */
export function addonCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.startsWith('/') ? env.XDG_CACHE_HOME : join(env.HOME || homedir(), '.cache')
  return join(base, 'svc')
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

/**
 * Writes `bytes` to `<root>/<sha256>/better_sqlite3.node` unless a file with that content is
 * already there, and returns its path. Safe when several processes call it at once.
 */
export function cacheAddon(bytes: Uint8Array, root: string): string {
  const digest = sha256(bytes)
  const dir = join(root, digest)
  const file = join(dir, SQLITE_ADDON_ASSET)
  if (existsSync(file)) {
    try {
      if (sha256(readFileSync(file)) === digest) return file
    } catch {
      // unreadable: write it again below
    }
  }
  mkdirSync(dir, {recursive: true, mode: 0o700})
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  try {
    writeFileSync(tmp, bytes, {mode: 0o755})
    renameSync(tmp, file)
  } finally {
    rmSync(tmp, {force: true})
  }
  return file
}
