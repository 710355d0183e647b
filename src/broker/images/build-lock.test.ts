import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {withBuildLock} from './build-lock.js'

describe('withBuildLock', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-build-lock-'))

  it('runs holders one at a time, and removes the lock after each (also after a throw)', async () => {
    const file = join(dir, 'a.lock')
    const order: string[] = []
    const hold = (name: string, fail = false) =>
      withBuildLock(
        file,
        async () => {
          order.push(`${name} in`)
          expect(readFileSync(file, 'utf8')).toBe(String(process.pid))
          await new Promise((r) => setTimeout(r, 50))
          order.push(`${name} out`)
          if (fail) throw new Error(`${name} failed`)
          return name
        },
        {pollMs: 10},
      )
    const results = await Promise.allSettled([hold('one', true), hold('two'), hold('three')])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled'])
    // No holder entered while another was in.
    for (let i = 0; i < order.length; i += 2) expect(order[i + 1]).toBe(order[i].replace(' in', ' out'))
    expect(existsSync(file)).toBe(false)
  })

  it('waits for a live process holding the lock, then takes it', async () => {
    const file = join(dir, 'b.lock')
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], {stdio: 'ignore'})
    writeFileSync(file, String(other.pid))
    let waited = false
    const got = withBuildLock(file, async () => 'mine', {pollMs: 10, waiting: () => (waited = true)})
    await new Promise((r) => setTimeout(r, 200))
    expect(waited).toBe(true)
    expect(readFileSync(file, 'utf8')).toBe(String(other.pid))
    other.kill('SIGKILL')
    await expect(got).resolves.toBe('mine')
  })

  it('takes over the lock of a process that died holding it', async () => {
    const file = join(dir, 'c.lock')
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], {encoding: 'utf8'}).stdout.trim()
    writeFileSync(file, dead)
    await expect(withBuildLock(file, async () => 'taken', {pollMs: 10, timeoutMs: 5_000})).resolves.toBe('taken')
  })

  it('gives up after its timeout while a live owner holds the lock', async () => {
    const file = join(dir, 'd.lock')
    writeFileSync(file, String(process.ppid))
    await expect(withBuildLock(file, async () => 'never', {pollMs: 10, timeoutMs: 100})).rejects.toThrow(/another build holds/)
    expect(readFileSync(file, 'utf8')).toBe(String(process.ppid))
  })
})
