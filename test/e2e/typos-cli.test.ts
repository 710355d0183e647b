import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it, vi} from 'vitest'
import {cliEnv, runCli} from '../helpers/cli.js'

vi.setConfig({testTimeout: 120_000})

// No Hub: a mistyped command or flag is refused before any request. NODE_ENV as a user has it
// (vitest sets `test`, which makes oclif warn on stderr about a command whose parse failed).
const env = cliEnv(mkdtempSync(join(tmpdir(), 'svc-e2e-typos-')), {OCLIF_COLUMNS: '80', NODE_ENV: undefined})
const svc = (args: string[]) => runCli(args, {env, timeoutMs: 60_000})

/** `svc <args> --json` refused as a usage error: exit 2, nothing on stderr; its `error`. */
async function usageError(args: string[]) {
  const r = await svc([...args, '--json'])
  expect(r.code).toBe(2)
  expect(r.stderr).toBe('')
  return r.json.error
}

/**
 * Typos (issue 22): the nearest command or flag is printed with the usage error, never asked
 * (no terminal here, as for agents and CI), exit 2, and `--json` carries it in `details`.
 */
describe('svc did-you-mean', () => {
  it('a mistyped command names the nearest one and exits 2', async () => {
    const r = await svc(['agnet', 'list'])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe('Error: command agnet list not found; did you mean `svc agent list`? See `svc help agent` for the commands.\n')

    expect(await usageError(['agnet', 'list'])).toEqual({
      code: 'usage_error',
      message: 'command agnet list not found; did you mean `svc agent list`? See `svc help agent` for the commands.',
      details: {command: 'agnet list', suggestion: 'agent list'},
    })
  })

  it('a slip in the last word, a topic alone and `svc help <typo>` are guessed too; nonsense is not', async () => {
    expect((await usageError(['agent', 'lsit'])).details).toEqual({command: 'agent lsit', suggestion: 'agent list'})
    expect((await usageError(['auth', 'tokn', 'create'])).details).toEqual({command: 'auth tokn create', suggestion: 'auth token create'})
    expect((await svc(['agnet'])).stderr).toContain('did you mean `svc agent`?')
    const help = await svc(['help', 'agnet', 'list'])
    expect(help.code).toBe(2)
    expect(help.stderr).toContain('did you mean `svc help agent list`?')
    expect(await usageError(['frobnicate'])).toEqual({code: 'usage_error', message: 'command frobnicate not found. See `svc help` for the commands.', details: {command: 'frobnicate'}})
  })

  it('a mistyped flag names the nearest flag of that command and exits 2', async () => {
    const r = await svc(['agent', 'list', '--projcet', 'x'])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^Error: Nonexistent flag: --projcet; did you mean --project\?\n/)
    expect(r.stderr).toContain('Usage: svc agent list [flags]')

    expect(await usageError(['agent', 'list', '--projcet', 'x'])).toEqual({
      code: 'usage_error',
      message: 'Nonexistent flag: --projcet; did you mean --project?',
      details: {flags: ['--projcet'], suggestions: {'--projcet': '--project'}},
    })
  })

  it('several mistyped flags each get their guess; a flag like nothing gets none', async () => {
    expect((await usageError(['agent', 'list', '--projcet=x', '--al'])).message).toBe('Nonexistent flags: --projcet=x, --al; did you mean --project for --projcet=x, --all for --al?')
    expect(await usageError(['agent', 'list', '--zzzzzzzz'])).toEqual({code: 'usage_error', message: 'Nonexistent flag: --zzzzzzzz', details: {flags: ['--zzzzzzzz'], suggestions: {}}})
  })
})
