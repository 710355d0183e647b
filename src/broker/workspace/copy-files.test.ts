import {chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {copyGlobProblem, copyIntoWorkspace} from './copy-files.js'

/** A checkout and a work tree as plain directories: what git put there does not matter here. */
function dirs() {
  const root = mkdtempSync(join(tmpdir(), 'svc-copy-'))
  const checkout = join(root, 'checkout')
  const workdir = join(root, 'work')
  const outside = join(root, 'outside')
  for (const d of [checkout, workdir, outside]) mkdirSync(d)
  const put = (base: string, rel: string, content: string, mode = 0o644) => {
    mkdirSync(dirname(join(base, rel)), {recursive: true})
    writeFileSync(join(base, rel), content)
    chmodSync(join(base, rel), mode)
  }
  return {root, checkout, workdir, outside, put}
}

let made: string[] = []
afterEach(() => {
  for (const r of made) rmSync(r, {recursive: true, force: true})
  made = []
})

describe('workspace.copy', () => {
  it('copies ignored files and trees by glob, modes kept, as copies (never a shared inode), and reports the method', async () => {
    const d = dirs()
    made.push(d.root)
    d.put(d.checkout, '.env', 'SECRET=1\n', 0o600)
    d.put(d.checkout, '.env.local', 'LOCAL=1\n')
    d.put(d.checkout, '.envrc', 'not matched\n')
    d.put(d.checkout, 'node_modules/pkg/index.js', 'module.exports = 1\n')
    d.put(d.checkout, 'node_modules/pkg/bin.js', '#!/bin/sh\necho tool\n', 0o755)
    mkdirSync(join(d.checkout, 'node_modules/.bin'))
    symlinkSync('../pkg/bin.js', join(d.checkout, 'node_modules/.bin/tool'))
    d.put(d.checkout, 'packages/a/.env', 'A=1\n')
    d.put(d.checkout, 'packages/b/.env', 'B=1\n')
    const r = await copyIntoWorkspace(d.checkout, d.workdir, ['.env', '.env.*', 'node_modules', 'packages/*/.env', 'missing-file'])
    expect(r).toMatchObject({files: 6, links: 1, skipped: []})
    expect(['reflink', 'copy']).toContain(r.method)
    expect(readFileSync(join(d.workdir, '.env'), 'utf8')).toBe('SECRET=1\n')
    expect(statSync(join(d.workdir, '.env')).mode & 0o777).toBe(0o600)
    expect(statSync(join(d.workdir, 'node_modules/pkg/bin.js')).mode & 0o777).toBe(0o755)
    expect(existsSync(join(d.workdir, '.envrc'))).toBe(false)
    expect(readFileSync(join(d.workdir, 'packages/b/.env'), 'utf8')).toBe('B=1\n')
    // The link is a link, relative, inside the work tree.
    expect(readlinkSync(join(d.workdir, 'node_modules/.bin/tool'))).toBe('../pkg/bin.js')
    expect(readFileSync(join(d.workdir, 'node_modules/.bin/tool'), 'utf8')).toContain('echo tool')
    // Never the user's file itself: writing the copy leaves the checkout's as it was.
    expect(statSync(join(d.workdir, '.env')).ino).not.toBe(statSync(join(d.checkout, '.env')).ino)
    writeFileSync(join(d.workdir, '.env'), 'changed by the agent\n')
    expect(readFileSync(join(d.checkout, '.env'), 'utf8')).toBe('SECRET=1\n')
  })

  it('never follows a link out of the checkout: a linked file or directory outside is left out, as is a link inside a copied tree', async () => {
    const d = dirs()
    made.push(d.root)
    d.put(d.outside, 'shadow', 'root:secret-hash\n')
    d.put(d.outside, 'keys/id_rsa', 'PRIVATE\n')
    symlinkSync(join(d.outside, 'shadow'), join(d.checkout, '.env'))
    symlinkSync(join(d.outside, 'keys'), join(d.checkout, 'config'))
    d.put(d.checkout, 'node_modules/ok.js', 'ok\n')
    symlinkSync(join(d.outside, 'shadow'), join(d.checkout, 'node_modules/leak'))
    symlinkSync('../../outside/keys', join(d.checkout, 'node_modules/leak-dir'))
    const r = await copyIntoWorkspace(d.checkout, d.workdir, ['.env', 'config', 'config/*', 'node_modules'])
    expect(r.files).toBe(1)
    expect(r.skipped.map((s) => s.path).sort()).toEqual(['.env', 'config', 'node_modules/leak', 'node_modules/leak-dir'])
    expect(r.skipped.every((s) => s.reason === 'a link to a file outside the checkout')).toBe(true)
    for (const p of ['.env', 'config', 'node_modules/leak', 'node_modules/leak-dir']) expect(lstatSync(join(d.workdir, p), {throwIfNoEntry: false})).toBeUndefined()
  })

  it('never writes through a link in the work tree, and keeps what is there (a tracked file keeps its committed content)', async () => {
    const d = dirs()
    made.push(d.root)
    d.put(d.checkout, 'cache/data', 'from the checkout\n')
    d.put(d.checkout, 'settings.json', 'local edit\n')
    // A committed link named like the ignored directory, pointing out of the work tree.
    symlinkSync(d.outside, join(d.workdir, 'cache'))
    d.put(d.workdir, 'settings.json', 'committed\n')
    const r = await copyIntoWorkspace(d.checkout, d.workdir, ['cache/*', 'settings.json'])
    expect(r.files).toBe(0)
    expect(existsSync(join(d.outside, 'data'))).toBe(false)
    expect(readFileSync(join(d.workdir, 'settings.json'), 'utf8')).toBe('committed\n')
    expect(r.skipped.map((s) => s.reason)).toEqual(['cache in the work tree is a link', 'already in the work tree (kept as committed)'])
    const whole = await copyIntoWorkspace(d.checkout, d.workdir, ['cache'])
    expect(whole.skipped.map((s) => s.reason)).toEqual(['already in the work tree (kept as committed)'])
    expect(existsSync(join(d.outside, 'data'))).toBe(false)
  })

  it('refuses globs that leave the checkout or name its .git; ** matches at any depth but never inside .git', async () => {
    for (const g of ['/etc/passwd', '../x', 'a/../../x', '.git', '.git/config', '']) expect(copyGlobProblem(g), g).not.toBeNull()
    expect(copyGlobProblem('.env.*')).toBeNull()
    const d = dirs()
    made.push(d.root)
    d.put(d.checkout, '.git/config', '[core]\n')
    d.put(d.checkout, '.git/sub/.env', 'in git\n')
    d.put(d.checkout, 'a/b/c/.env', 'deep\n')
    const r = await copyIntoWorkspace(d.checkout, d.workdir, ['**/.env', '../outside', '.git'])
    expect(r.files).toBe(1)
    expect(readFileSync(join(d.workdir, 'a/b/c/.env'), 'utf8')).toBe('deep\n')
    expect(existsSync(join(d.workdir, '.git'))).toBe(false)
    expect(r.skipped.map((s) => s.path)).toEqual(['../outside', '.git'])
  })
})
