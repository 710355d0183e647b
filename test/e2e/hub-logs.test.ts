import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it, vi} from 'vitest'
import {BIN, cliEnv} from '../helpers/cli.js'

// Liveness limit only (a shared, loaded machine): a Hub may take many seconds to come up.
vi.setConfig({testTimeout: 120_000})

const homes: string[] = []
afterAll(() => homes.forEach((h) => rmSync(h, {recursive: true, force: true})))

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

/**
 * Runs `svc server start` (port 0) until it has logged the whole "hub listening" record (not
 * the command's own "svc hub listening on" line), stops it
 * with SIGTERM and returns what it wrote until then (`script` adds its own words at a signal). `pty`: under util-linux `script`, so stdout and stderr are a
 * pseudo-terminal (the output is the terminal's, lines end in CR LF); else plain pipes.
 */
async function hubOutput(args: string[], opts: {pty: boolean; env?: Record<string, string | undefined>}): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-logs-'))
  homes.push(home)
  const env = cliEnv(home, {TMUX_TMPDIR: home, ...opts.env})
  const argv = [process.execPath, BIN, 'server', 'start', '--port', '0', ...args]
  // Own process group, so the stop reaches the Hub under `script` too.
  const child = opts.pty
    ? spawn('script', ['-qfec', argv.map(q).join(' '), '/dev/null'], {env, detached: true, stdio: ['pipe', 'pipe', 'pipe']})
    : spawn(argv[0], argv.slice(1), {env, detached: true, stdio: ['pipe', 'pipe', 'pipe']})
  let out = ''
  let upToListening = ''
  const exited = new Promise<void>((r) => child.on('exit', () => r()))
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d
      if (!upToListening && /(?<!svc )hub listening[^\n]*\n/.test(out)) {
        upToListening = out
        resolve()
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    void exited.then(() => reject(new Error(`svc server start exited before listening: ${out}`)))
  })
  process.kill(-child.pid!, 'SIGTERM')
  await exited
  return upToListening
}

// Log records only: not the command's own ready line, nor pino-pretty's indented fields.
const logLines = (out: string) => out.split(/\r?\n/).filter((l) => l.trim() && !/^\s/.test(l) && !l.startsWith('svc hub listening on'))

/** Issue 22 item 23: a workstation Hub on a terminal logs readable lines; JSON lines otherwise. */
describe('Hub logs: readable on a terminal, JSON lines elsewhere', () => {
  it('a workstation Hub on a TTY writes human lines (no JSON), without colour under NO_COLOR', async () => {
    const out = await hubOutput([], {pty: true})
    const lines = logLines(out)
    const listening = lines.find((l) => l.includes('hub listening'))
    expect(listening).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: hub listening$/)
    expect(lines.filter((l) => l.startsWith('{'))).toEqual([])
    expect(out).not.toContain('\x1b[')
  })

  it('with colour allowed, the terminal lines are coloured', async () => {
    const out = await hubOutput([], {pty: true, env: {NO_COLOR: undefined, FORCE_COLOR: undefined}})
    expect(out).toMatch(/\x1b\[\d+mINFO\x1b\[\d+m/)
  })

  it('without a TTY every line is a JSON record', async () => {
    const out = await hubOutput([], {pty: false})
    const lines = logLines(out)
    expect(lines.length).toBeGreaterThan(2)
    for (const l of lines) expect(() => JSON.parse(l), l).not.toThrow()
    expect(lines.map((l) => JSON.parse(l)).find((r) => r.msg === 'hub listening')).toMatchObject({level: 30, svc: 'hub', mode: 'workstation'})
  })

  it('a hosted Hub writes JSON lines even on a TTY', async () => {
    const out = await hubOutput(['--hosted', '--host', '127.0.0.1'], {pty: true})
    const lines = logLines(out)
    for (const l of lines) expect(() => JSON.parse(l), l).not.toThrow()
    expect(lines.map((l) => JSON.parse(l)).find((r) => r.msg === 'hub listening')).toMatchObject({mode: 'hosted'})
  })
})
