import {createHash} from 'node:crypto'
import {mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {addonCacheRoot, cacheAddon, sqliteNativeBinding} from './native-binding.js'

const bytes = new Uint8Array(Buffer.from('not really an addon, but bytes all the same'))
const digest = createHash('sha256').update(bytes).digest('hex')

describe('the SQLite addon cache of the single executable', () => {
  it('outside the executable there is no binding to pass (better-sqlite3 finds its own)', async () => {
    expect(await sqliteNativeBinding()).toBeUndefined()
  })

  it('lives under $XDG_CACHE_HOME/svc, else ~/.cache/svc (a relative XDG_CACHE_HOME is ignored)', () => {
    expect(addonCacheRoot({XDG_CACHE_HOME: '/x/cache', HOME: '/home/u'})).toBe('/x/cache/svc')
    expect(addonCacheRoot({HOME: '/home/u'})).toBe('/home/u/.cache/svc')
    expect(addonCacheRoot({XDG_CACHE_HOME: 'rel', HOME: '/home/u'})).toBe('/home/u/.cache/svc')
  })

  it('writes the addon once, named by its SHA-256, and leaves no temp file', () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-addon-'))
    const file = cacheAddon(bytes, root)
    expect(file).toBe(join(root, digest, 'better_sqlite3.node'))
    expect(readFileSync(file)).toEqual(Buffer.from(bytes))
    expect(cacheAddon(bytes, root)).toBe(file)
    expect(readdirSync(join(root, digest))).toEqual(['better_sqlite3.node'])
  })

  it('replaces a file whose content does not match its name (truncated or altered)', () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-addon-'))
    const file = cacheAddon(bytes, root)
    writeFileSync(file, 'truncat')
    expect(cacheAddon(bytes, root)).toBe(file)
    expect(readFileSync(file)).toEqual(Buffer.from(bytes))
  })
})
