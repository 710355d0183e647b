import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {MASK, maskPatterns} from './log-masking.js'
import {servedLog} from './agent-logs.js'
import {renderScreen, ScreenRenderer} from './screen-render.js'

// The raw pane output (pipe-pane log, 200x50) of the real Claude Code 2.1.197 at its permission
// prompt, recorded by test/e2e/record-claude-screen.test.ts; .pane.txt is tmux's own capture then.
const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/${name}`, import.meta.url))
const RAW = fixture('claude-permission-prompt.ansi')
const PANE = fixture('claude-permission-prompt.pane.txt').toString('utf8')
const trimEnd = (s: string) => s.split('\n').map((l) => l.trimEnd()).join('\n').replace(/\n+$/, '')

describe('renderScreen', () => {
  it("renders a recorded Claude Code screen to readable lines: tmux's own view of the pane, words spaced", async () => {
    const text = await renderScreen(RAW)
    expect(text).toContain('Do you want to proceed?')
    expect(text).toContain('Esc to cancel · Tab to amend')
    expect(text).toContain('❯ 1. Yes')
    // No escape sequence or spinner residue survives.
    expect(text).not.toMatch(/\x1b|Proofing/)
    expect(text).toBe(trimEnd(PANE))
    // What dropping the escape sequences made of it (the defect this replaces).
    expect(RAW.toString('utf8').replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, '')).toContain('Doyouwanttoproceed?')
  })

  it('keeps the lines that scrolled off the screen, joins soft-wrapped lines and trims trailing blanks', async () => {
    const lines = Array.from({length: 8}, (_, i) => `line ${i}\r\n`).join('')
    expect(await renderScreen(`${lines}${'x'.repeat(15)}\r\n\r\n\r\n`, {cols: 10, rows: 3})).toBe(`${Array.from({length: 8}, (_, i) => `line ${i}`).join('\n')}\n${'x'.repeat(15)}`)
  })

  it('shows a full-screen program on the alternate screen after the normal lines', async () => {
    expect(await renderScreen('before\r\n\x1b[?1049h\x1b[Hfull screen', {cols: 20, rows: 4})).toBe('before\nfull screen')
  })

  it('hands out lines once they scrolled off the screen, then the rest (the --follow renderer)', async () => {
    const r = new ScreenRenderer({cols: 20, rows: 3})
    await r.write('a\r\nb\r\n')
    expect(await r.takeFinal()).toEqual([])
    await r.write('c\r\nd\r\ne')
    expect(await r.takeFinal()).toEqual(['a', 'b'])
    await r.write('\r\nf')
    expect(await r.takeFinal()).toEqual(['c'])
    expect(r.rest()).toEqual(['d', 'e', 'f'])
    r.dispose()
  })
})

describe('servedLog', () => {
  const SECRET = 'sk-live-4f7a9c1e55'
  const patterns = maskPatterns([SECRET])

  it('masks a secret printed whole, in the raw bytes and on the screen', async () => {
    const raw = `key=${SECRET}\r\n`
    expect(await servedLog(raw, patterns, 'raw')).toBe(`key=${MASK}\r\n`)
    expect(await servedLog(raw, patterns, 'screen')).toBe(`key=${MASK}`)
  })

  it('masks a secret split by colour sequences or wrapped at the edge, which only comes together on the screen', async () => {
    const split = `key=sk-live-\x1b[31m4f7a\x1b[0m9c1e55\r\n`
    expect(await servedLog(split, patterns, 'raw')).toContain('sk-live-')
    const shown = await servedLog(split, patterns, 'screen')
    expect(shown).toBe(`key=${MASK}`)
    expect(shown).not.toContain('4f7a9c1e55')
    // Drawn piece by piece with cursor moves: the pieces land side by side on the screen.
    const moved = `\x1b[1;13H9c1e55\x1b[1;1Hsk-live-4f7a\r\n`
    expect(await servedLog(moved, patterns, 'screen')).toBe(MASK)
    // Wrapped at the pane's right edge (200 columns): one line again on the screen text.
    const wrapped = `${'.'.repeat(190)}${SECRET}\r\n`
    expect(await servedLog(wrapped, patterns, 'screen')).toBe(`${'.'.repeat(190)}${MASK}`)
  })
})
