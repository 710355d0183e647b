import {existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {readJsonObject, writeJsonFile} from './json-file.js'

/**
 * The broker prepares an agent's HOME while the agent is stopped; the agent may have planted
 * links there to the host's files (a restart with its own token follows). Reading, keeping an
 * unreadable copy and writing must touch neither the linked file nor copy it into the HOME.
 */
describe('harness JSON files in a HOME the agent wrote', () => {
  const roots: string[] = []
  afterEach(() => roots.splice(0).forEach((r) => rmSync(r, {recursive: true, force: true})))
  function setup() {
    const root = mkdtempSync(join(tmpdir(), 'svc-home-links-'))
    roots.push(root)
    const home = join(root, 'state', 'homes', 'agent-1')
    mkdirSync(home, {recursive: true})
    const secret = join(root, 'hub-dev-token')
    writeFileSync(secret, 'svc_dev_secret-of-the-hub\n')
    const outsideDir = join(root, 'hub-dir')
    mkdirSync(outsideDir)
    return {home, secret, outsideDir}
  }

  it('a file linked to a host file is neither read, copied beside it, nor written through', async () => {
    const {home, secret} = setup()
    const state = join(home, '.claude.json')
    symlinkSync(secret, state)
    expect(await readJsonObject(state)).toEqual({})
    await writeJsonFile(state, {hasCompletedOnboarding: true})
    expect(readFileSync(secret, 'utf8')).toBe('svc_dev_secret-of-the-hub\n')
    expect(lstatSync(state).isSymbolicLink()).toBe(false)
    expect(JSON.parse(readFileSync(state, 'utf8'))).toEqual({hasCompletedOnboarding: true})
    // Nothing of the secret was copied into the HOME (no `.svc-unreadable` of it).
    for (const f of readdirSync(home)) expect(readFileSync(join(home, f), 'utf8')).not.toContain('svc_dev_secret')
  })

  it('a directory on the way linked to a host directory is not written into', async () => {
    const {home, outsideDir} = setup()
    symlinkSync(outsideDir, join(home, '.claude'))
    await writeJsonFile(join(home, '.claude', 'settings.json'), {hooks: {}})
    expect(readdirSync(outsideDir)).toEqual([])
    expect(lstatSync(join(home, '.claude')).isDirectory()).toBe(true)
    expect(existsSync(join(home, '.claude', 'settings.json'))).toBe(true)
  })
})
