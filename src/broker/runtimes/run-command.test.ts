import {mkdtempSync, realpathSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest'
import {runCommand, runHere, type RunOptions, type RunResult} from './run-command.js'
import {spawnerPid, warmSpawner} from './spawner.js'

type Runner = (file: string, args: string[], opts?: RunOptions) => Promise<RunResult>

let dir: string
beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'svc-run-command-')))
  warmSpawner()
  await vi.waitFor(() => expect(spawnerPid()).toBeDefined(), {timeout: 20_000, interval: 20})
})
afterAll(() => rmSync(dir, {recursive: true, force: true}))

// The same table in this process (runHere) and in the spawner (runCommand once it is up).
describe.each([
  ['here', runHere as Runner],
  ['in the spawner', runCommand as Runner],
])('a command run %s', (_where, run) => {
  it('answers its exit code, stdout and trimmed stderr, whatever the code', async () => {
    const r = await run('sh', ['-c', 'printf "out\\n"; printf " err \\n" >&2; exit 3'])
    expect(r).toEqual({code: 3, stdout: Buffer.from('out\n'), stderr: 'err'})
    expect(Buffer.isBuffer(r.stdout)).toBe(true)
  })

  it('gets exactly the argv, environment, working directory and stdin it is given', async () => {
    const r = await run('sh', ['-c', 'printf "%s|%s|%s|" "$1" "$SVC_RC_TEST" "$(pwd)"; cat', 'sh', 'a; $(b) "c"'], {env: {PATH: process.env.PATH!, SVC_RC_TEST: 'v=1'}, cwd: dir, input: Buffer.from([0, 1, 255])})
    expect(r.code).toBe(0)
    expect(r.stdout).toEqual(Buffer.concat([Buffer.from(`a; $(b) "c"|v=1|${dir}|`), Buffer.from([0, 1, 255])]))
  })

  it("a program not on PATH is the runner's error, not an exit code", async () => {
    await expect(run('svc-no-such-program', [], {env: {PATH: dir}})).rejects.toThrow('svc-no-such-program is not installed or not on PATH')
  })

  it('is killed at its timeout (code 124) and when its stdout passes the limit (truncated)', async () => {
    const slow = await run('sleep', ['30'], {timeoutMs: 300})
    expect(slow).toEqual({code: 124, stdout: Buffer.alloc(0), stderr: 'sleep did not finish within 300 ms'})
    const big = await run('sh', ['-c', 'while :; do printf 0123456789; done'], {maxStdoutBytes: 100_000})
    expect(big.truncated).toBe(true)
    expect(big.stdout.length).toBe(100_000)
  })
})

describe("svc's process spawner", () => {
  it('is the parent of the commands runCommand starts, not this process', async () => {
    const parent = Number((await runCommand('sh', ['-c', 'echo $PPID'])).stdout.toString())
    expect(parent).toBe(spawnerPid())
    expect(parent).not.toBe(process.pid)
  })

  it('gone, commands run here again', async () => {
    const pid = spawnerPid()!
    process.kill(pid, 'SIGKILL')
    await expect.poll(() => spawnerPid()).toBeUndefined()
    const parent = Number((await runCommand('sh', ['-c', 'echo $PPID'])).stdout.toString())
    expect(parent).toBe(process.pid)
  })
})
