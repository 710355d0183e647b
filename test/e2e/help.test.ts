import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it, vi} from 'vitest'

vi.setConfig({testTimeout: 120_000})
import {COMMANDS} from '../../src/cli/commands.js'
import {cliEnv, runCli} from '../helpers/cli.js'

const env = cliEnv(mkdtempSync(join(tmpdir(), 'svc-e2e-help-')), {OCLIF_COLUMNS: '80'})
const svc = (args: string[]) => runCli(args, {env, timeoutMs: 60_000})

/** The VERSION section names the platform and Node version of the machine: keep it out of snapshots. */
const stable = (text: string) => text.replace(/svc\/\S+ \S+ node-v\S+/g, 'svc/VERSION PLATFORM node-VERSION')

// One readable file per help text under __snapshots__/help/; `vitest -u` rewrites them.
const file = (name: string) => `./__snapshots__/help/${name}.txt`

describe('help texts (snapshots)', () => {
  it.each([['help'], ['help project'], ['help auth'], ['help auth token'], ['help server']])('svc %s', async (line) => {
    const r = await svc(line.split(' '))
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    await expect(stable(r.stdout)).toMatchFileSnapshot(file(line.replace(/ /g, '_')))
  })

  it('svc --help is svc help', async () => {
    const [a, b] = await Promise.all([svc(['--help']), svc(['help'])])
    expect(a.code).toBe(0)
    expect(a.stdout).toBe(b.stdout)
  })

  it.each(Object.keys(COMMANDS))('svc %s --help', async (id) => {
    const r = await svc([...id.split(':'), '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('USAGE')
    await expect(stable(r.stdout)).toMatchFileSnapshot(file(`${id.replace(/:/g, '_')}--help`))
  })

  it('svc help lists every topic and top-level command', async () => {
    const r = await svc(['help'])
    for (const word of new Set(Object.keys(COMMANDS).map((id) => id.split(':')[0]))) expect(r.stdout).toContain(`  ${word} `)
  })
})
