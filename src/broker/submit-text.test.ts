import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {DEFAULT_RESOURCES, type RuntimeHandle} from './runtime.js'
import {LocalTmuxRuntime} from './runtimes/local-tmux.js'
import {usePrivateTmux} from '../../test/helpers/private-tmux.js'
import {submitText, SUBMIT_TIMING} from './submit-text.js'

const TUI = fileURLToPath(new URL('../../test/fixtures/paste-tui.cjs', import.meta.url))

// Real tmux on a private server, running a program with Gemini CLI's paste rule (an Enter read
// within 40 ms of a paste is a newline) that is busy when the message arrives.
describe('submitText on a real tmux pane', () => {
  let dir: string
  let env: NodeJS.ProcessEnv
  let rt: LocalTmuxRuntime
  let n = 0

  usePrivateTmux('svc-submit-', {pollMs: 50}, (t) => void ({dir, env, rt} = t))

  /** Starts the program busy for `busyMs` once "ready>" shows, each draw taking `drawMs`; resolves its handle and its output file. */
  async function busyTui(busyMs: number, mode = '', drawMs = 0): Promise<{h: RuntimeHandle; out: string}> {
    n += 1
    const out = join(dir, `submitted-${n}.jsonl`)
    const agentId = `submit-${n}-${process.pid}`
    const h = await rt.start({agentId, name: `s${n}`, projectId: 'p1', command: [process.execPath, TUI, out, String(busyMs), String(drawMs), mode], env: {SVC_AGENT_ID: agentId}, resources: DEFAULT_RESOURCES})
    const deadline = Date.now() + 20_000
    while (!(await rt.capture(h)).includes('ready>')) {
      if (Date.now() > deadline) throw new Error(`the program never showed "ready>":\n${await rt.capture(h)}`)
      await new Promise((r) => setTimeout(r, 20))
    }
    return {h, out}
  }

  const submitted = (out: string) => (existsSync(out) ? readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l)) : [])

  it('presses Enter only once the busy program has drawn the paste: the text is submitted, not left in its input box', async () => {
    // Busy for 3 s, ten times the settle: a fixed pause would have both arrive in one read.
    const {h, out} = await busyTui(3000)
    await submitText(rt, h, 'fix the failing test')
    const deadline = Date.now() + 20_000
    while (submitted(out).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(submitted(out), await rt.capture(h)).toEqual(['fix the failing test'])
  })

  it('waits longer for a program slow to draw: its paste guard goes down only after another slow draw', async () => {
    // Each draw takes 1 s: the guard is up until ~2 s after the paste, long after a fixed settle.
    const {h, out} = await busyTui(0, '', 1000)
    await submitText(rt, h, 'slow to draw')
    const deadline = Date.now() + 20_000
    while (submitted(out).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(submitted(out), await rt.capture(h)).toEqual(['slow to draw'])
  })

  it('a paste the program never draws still gets its Enter, once the wait for the screen is over', async () => {
    const {h, out} = await busyTui(0, 'silent')
    await submitText(rt, h, 'quiet text', {}, {...SUBMIT_TIMING, landedMs: 500})
    const deadline = Date.now() + 20_000
    while (submitted(out).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(submitted(out)).toEqual(['quiet text'])
  })

  it('noEnter pastes the text and submits nothing', async () => {
    const {h, out} = await busyTui(0)
    await submitText(rt, h, 'draft only', {noEnter: true})
    const deadline = Date.now() + 10_000
    while (!(await rt.capture(h)).includes('draft only') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(await rt.capture(h)).toContain('ready> draft only')
    expect(submitted(out)).toEqual([])
  })
})
