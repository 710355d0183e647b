import {spawn} from 'node:child_process'
import {copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {parse, parseDocument} from 'yaml'
import {describe, expect, it} from 'vitest'
import {editSettingsFile, withSettingsLock} from './settings-file-edit.js'

const WRITER = fileURLToPath(new URL('../../test/helpers/settings-writer.ts', import.meta.url))
const BASE = fileURLToPath(new URL('../../test/fixtures/settings/base.yaml', import.meta.url))

function writer(args: string[]) {
  return spawn(process.execPath, ['--import', 'tsx', WRITER, ...args], {stdio: ['ignore', 'pipe', 'pipe']})
}

const exited = (child: ReturnType<typeof writer>) =>
  new Promise<{code: number | null; signal: NodeJS.Signals | null; stderr: string}>((resolve) => {
    let stderr = ''
    child.stderr!.on('data', (d) => (stderr += d))
    child.on('exit', (code, signal) => resolve({code, signal, stderr}))
  })

function tempSettings(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-settings-'))
  const file = join(dir, 'settings.yaml')
  copyFileSync(BASE, file)
  return file
}

/** The file parses, and every line of the base fixture is still there, in order. */
function intact(file: string) {
  const text = readFileSync(file, 'utf8')
  expect(parseDocument(text).errors).toEqual([])
  const lines = text.split('\n')
  let j = 0
  for (const line of readFileSync(BASE, 'utf8').split('\n')) {
    while (j < lines.length && lines[j] !== line) j++
    expect(j, `base line ${JSON.stringify(line)} lost`).toBeLessThan(lines.length)
  }
  return parse(text)
}

describe('settings file writes across processes', () => {
  it('two processes editing different keys 200 times each lose no edit and never tear the file', async () => {
    const file = tempSettings()
    const a = writer([file, 'distinct', 'a', '200'])
    const b = writer([file, 'distinct', 'b', '200'])
    const done = Promise.all([exited(a), exited(b)])
    let finished = false
    void done.then(() => (finished = true))
    // A reader polls the file the whole time: it must always parse.
    let reads = 0
    while (!finished) {
      expect(parseDocument(readFileSync(file, 'utf8')).errors).toEqual([])
      reads++
      await new Promise((r) => setTimeout(r, 5))
    }
    const results = await done
    for (const r of results) expect(r, r.stderr).toMatchObject({code: 0})
    const data = intact(file)
    for (const name of ['a', 'b']) {
      expect(Object.keys(data.writers[name])).toHaveLength(200)
      for (let i = 0; i < 200; i++) expect(data.writers[name][`k${i}`]).toBe(i)
    }
    expect(reads).toBeGreaterThan(0)
    expect(existsSync(file + '.lock')).toBe(false)
  }, 300_000)

  it('a writer killed with SIGKILL at random moments leaves the old or the new file, never a mix', async () => {
    const file = tempSettings()
    let last = -1
    for (let round = 0; round < 12; round++) {
      const child = writer([file, 'forever'])
      const exit = exited(child)
      await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()))
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 150))
      child.kill('SIGKILL')
      expect((await exit).signal).toBe('SIGKILL')
      const data = intact(file)
      if (data.kill) {
        const counter = data.kill.counter as number
        // One edit writes counter and its item together: both or neither.
        expect(Object.keys(data.kill.items)).toHaveLength(counter + 1)
        expect(data.kill.items[`k${counter}`]).toBe(`item ${counter} `.repeat(20))
        expect(counter).toBeGreaterThanOrEqual(last)
        last = counter
      }
    }
    // The next writer recovers a lock left by a killed one, and sweeps its temp files.
    await editSettingsFile(file, [{path: ['after'], value: true}])
    expect(intact(file).after).toBe(true)
    expect(readdirSync(join(file, '..')).filter((n) => n !== 'settings.yaml')).toEqual([])
  }, 300_000)
})

describe('withSettingsLock', () => {
  it('serialises callers in one process and is re-entrant within one call chain', async () => {
    const file = tempSettings()
    const order: string[] = []
    const slow = withSettingsLock(file, async () => {
      order.push('a:start')
      await editSettingsFile(file, [{path: ['x'], value: 1}]) // re-entrant: does not wait for itself
      await new Promise((r) => setTimeout(r, 100))
      order.push('a:end')
    })
    await new Promise((r) => setTimeout(r, 10))
    const second = editSettingsFile(file, [{path: ['y'], value: 2}]).then(() => order.push('b'))
    await Promise.all([slow, second])
    expect(order).toEqual(['a:start', 'a:end', 'b'])
    expect(parse(readFileSync(file, 'utf8'))).toMatchObject({x: 1, y: 2})
  })

  it('recovers a lock left by a dead process', async () => {
    const file = tempSettings()
    writeFileSync(file + '.lock', JSON.stringify({pid: 2 ** 22 + 12345, host: (await import('node:os')).hostname(), createdAt: new Date().toISOString(), nonce: 'dead'}))
    await editSettingsFile(file, [{path: ['z'], value: 3}])
    expect(parse(readFileSync(file, 'utf8')).z).toBe(3)
    expect(existsSync(file + '.lock')).toBe(false)
  })

  it('gives up with 409 conflict while a live process holds the lock', async () => {
    const file = tempSettings()
    writeFileSync(file + '.lock', JSON.stringify({pid: process.ppid, host: (await import('node:os')).hostname(), createdAt: new Date().toISOString(), nonce: 'live'}))
    await expect(withSettingsLock(file, () => 1, {timeoutMs: 200})).rejects.toMatchObject({code: 'conflict', status: 409})
  })

  it('writes through a symlink to the real file, keeping the link and the mode', async () => {
    const {chmodSync, lstatSync, statSync, symlinkSync} = await import('node:fs')
    const real = tempSettings()
    chmodSync(real, 0o600)
    const link = join(mkdtempSync(join(tmpdir(), 'svc-link-')), 'settings.yaml')
    symlinkSync(real, link)
    await editSettingsFile(link, [{path: ['hub', 'grove_id'], value: 'g2'}])
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    expect(statSync(real).mode & 0o777).toBe(0o600)
    expect(parse(readFileSync(real, 'utf8')).hub.grove_id).toBe('g2')
  })

  it('creates a missing file with schema_version "1" and does not create one for a no-op', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-new-'))
    const none = await editSettingsFile(join(dir, 'a', 'settings.yaml'), [{path: ['hub'], value: null}])
    expect(none).toMatchObject({changed: false, created: false})
    expect(existsSync(join(dir, 'a', 'settings.yaml'))).toBe(false)
    const made = await editSettingsFile(join(dir, 'b', 'settings.yaml'), [{path: ['hub', 'endpoint'], value: 'http://h'}])
    expect(made).toMatchObject({changed: true, created: true})
    expect(readFileSync(join(dir, 'b', 'settings.yaml'), 'utf8')).toBe('schema_version: "1"\nhub:\n  endpoint: http://h\n')
  })
})
