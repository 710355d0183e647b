import {readFileSync} from 'node:fs'
import type {Locator, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {screenshot} from '../helpers/web-browser.js'
import {startWebWorkstation, type WebWorkstation} from '../helpers/web-workstation.js'

// The real Claude Code 2.1.197 at its permission prompt, as its pane recorded it (raw bytes,
// 200x50): test/e2e/record-claude-screen.test.ts. Replayed in a shell agent's own terminal, it
// draws the same screen there (cursor moves, colours, redraws) without a model server.
const FIXTURE = readFileSync(new URL('../fixtures/claude-permission-prompt.ansi', import.meta.url))

/** The text the component's terminal emulator holds (its buffer), and what its DOM rows show. */
const emulated = (t: Locator) => t.evaluate((el) => (el as unknown as {screenText(): string}).screenText())
const drawn = async (t: Locator) => ((await t.locator('.xterm-rows').textContent()) ?? '').replace(/\u00a0/g, ' ')

/**
 * Issue 30, "terminals you can read": the agent page draws the live terminal and the followed
 * logs with a terminal emulator (xterm.js), so a Claude Code screen reads as it did in the pane
 * (`Do you want to proceed?`, not `Doyouwanttoproceed?`); once stopped, the archived logs are
 * the Hub's rendered screen text.
 */
describe('the agent page draws a Claude Code screen with a terminal emulator', {timeout: 180_000}, () => {
  let w: WebWorkstation
  let page: Page
  beforeAll(async () => {
    w = await startWebWorkstation('svc-e2e-web-term')
    page = await (await w.browser.newContext({viewport: {width: 1600, height: 1000}})).newPage()
  }, 120_000)
  afterAll(async () => {
    await w?.stop()
  })

  it('the logs pane and the attached terminal show the readable screen; the archived logs are rendered text', async () => {
    const project = (await w.api('GET', '/api/v1/projects')).projects[0]
    const {agent} = await w.api('POST', '/api/v1/agents', {name: 'claudescreen', projectId: project.id, harnessConfig: 'shell'})
    expect(agent.phase).toBe('running')
    await w.signIn(page, `/#/agents/${agent.id}`)
    await page.getByRole('button', {name: 'Attach to the terminal'}).click()
    const terminal = page.locator('svc-terminal#attach')
    await expect.poll(() => terminal.locator('[data-role="state"]').textContent()).toBe('Terminal: connected')
    // Attached first: the screen is drawn while the person watches.
    const keys = (k: string) => w.api('POST', `/api/v1/agents/${agent.id}/keys`, {keys: k})
    // The recording reaches the agent's shell as base64 typed into a file, then is replayed
    // onto a cleared screen.
    await keys("stty -echo; cat > /tmp/screen.b64 <<'EOF'\r")
    const b64 = FIXTURE.toString('base64').match(/.{1,76}/g)!
    for (let i = 0; i < b64.length; i += 60) await keys(`${b64.slice(i, i + 60).join('\r')}\r`)
    await keys('EOF\r')
    // The recording asks the terminal who it is (as Claude Code did): the answers arrive as input,
    // unechoed and read away; then the cursor goes below the drawn screen.
    await keys("clear; base64 -d /tmp/screen.b64; sleep 1; read -t 1 -s -r -d '' _; stty echo; printf '\\033[30;1H'; echo replayed-$((6*7))\r")
    await expect.poll(async () => (await w.api('GET', `/api/v1/agents/${agent.id}/logs`)) as string, {timeout: 30_000}).toContain('replayed-42')

    const logs = page.locator('svc-terminal#logs')
    await expect.poll(() => logs.locator('[data-role="state"]').textContent(), {timeout: 20_000}).toBe('Logs: connected')
    await expect.poll(() => emulated(logs), {timeout: 20_000}).toContain('replayed-42')
    const text = await emulated(logs)
    expect(text).toContain('Do you want to proceed?')
    expect(text).toContain('❯ 1. Yes')
    expect(text).toContain('Esc to cancel · Tab to amend')
    expect(text).not.toContain('Doyouwanttoproceed')
    // Drawn on the page, not only held: the rows of xterm's renderer carry the words, spaced
    // (xterm draws only while the terminal is in view).
    await logs.scrollIntoViewIfNeeded()
    await expect.poll(() => drawn(logs)).toContain('Do you want to proceed?')
    // xterm's own styles apply under the page's CSP (mirrored into constructed sheets): its
    // light foreground, not the page's dark text on the dark terminal.
    expect(await logs.evaluate((el) => getComputedStyle(el.shadowRoot!.querySelector('.xterm-rows')!).color)).toBe('rgb(217, 225, 232)')
    await screenshot(page, 'web-agent-claude-logs')

    // The attached terminal (the pane's size) drew the same screen as it came.
    await expect.poll(() => emulated(terminal), {timeout: 20_000}).toContain('Do you want to proceed?')
    await terminal.scrollIntoViewIfNeeded()
    await expect.poll(() => drawn(terminal)).toContain('Do you want to proceed?')
    // Keys typed into the focused terminal reach the agent's shell.
    await terminal.locator('.xterm').click()
    await page.keyboard.type('echo typed-$((6*7))')
    await page.keyboard.press('Enter')
    await expect.poll(() => emulated(terminal), {timeout: 20_000}).toContain('typed-42')
    await terminal.scrollIntoViewIfNeeded()
    await screenshot(page, 'web-agent-claude-terminal')
    // Attached again: the screen as it stands (tmux's capture, the first bytes of the stream,
    // sent before the browser's upgrade completed) at once, nothing typed.
    await page.getByRole('button', {name: 'Detach'}).click()
    await page.getByRole('button', {name: 'Attach to the terminal'}).click()
    const again = page.locator('svc-terminal#attach')
    await expect.poll(() => again.locator('[data-role="state"]').textContent()).toBe('Terminal: connected')
    await expect.poll(() => emulated(again), {timeout: 20_000}).toContain('typed-42')
    expect(await emulated(again)).toContain('Do you want to proceed?')
    await again.scrollIntoViewIfNeeded()
    await expect.poll(() => drawn(again)).toContain('Do you want to proceed?')
    await screenshot(page, 'web-agent-claude-reattached')

    await w.api('POST', `/api/v1/agents/${agent.id}/stop`, {})
    await expect.poll(() => page.locator('#agent-phase').textContent(), {timeout: 20_000}).toBe('stopped')
    const archived = page.locator('pre[aria-label="Logs"]')
    await expect.poll(() => archived.textContent(), {timeout: 20_000}).toContain('Do you want to proceed?')
    expect(await archived.textContent()).not.toMatch(/\x1b|Doyouwanttoproceed/)
    await screenshot(page, 'web-agent-claude-archived')
  })
})
