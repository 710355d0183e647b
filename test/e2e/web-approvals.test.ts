import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import type {Browser, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startClaudeHub, type ClaudeHub} from '../helpers/claude-hub.js'
import {waitFor} from '../helpers/live-hub.js'
import {userText} from '../helpers/model-servers/anthropic.js'
import {launchChromium, screenshot, signInPage, unlabelledControls} from '../helpers/web-browser.js'

const POLL = {timeout: 90_000, interval: 250}
// A loaded machine can take minutes before Claude Code's first model request (nice 10, a cold start).
const FIRST = {timeout: 300_000, interval: 250}

/**
 * Issue 28's web half in Debian Chromium, against a real `svc server start` whose co-located
 * broker runs the real `claude` CLI (scripted model): Claude Code asks to run Bash; the request
 * shows on the agent page and in the approvals inbox, live; Allow on the agent page runs the
 * command, Deny with a reason in the inbox (a phone-sized screen) refuses it and the model reads
 * the reason. Nothing is typed into the agent's terminal.
 */
describe('web: approvals on the agent page and in the inbox', {timeout: 600_000}, () => {
  let hub: ClaudeHub
  let agent: {id: string; workspace: {path: string}}
  let browser: Browser
  let page: Page
  const svc = (args: string[]) => hub.svc(args)
  const pendingOf = async () => (await hub.api(`/api/v1/agents/${agent.id}/approvals?state=pending`)).approvals as any[]
  const idleAfter = (turns: number) =>
    waitFor(async () => {
      const a = (await hub.api(`/api/v1/agents/${agent.id}`)).agent
      return a.activity === 'idle' && a.turns >= turns ? a : undefined
    }, 120_000, `idle after turn ${turns}`)
  const card = (p: Page) => p.locator('svc-approval-card')

  beforeAll(async () => {
    hub = await startClaudeHub('web-approvals')
    browser = await launchChromium()
    page = await (await browser.newContext({viewport: {width: 1280, height: 900}})).newPage()
    await signInPage(page, hub.server.url, hub.token)
  })
  afterAll(async () => {
    await browser?.close()
    await hub?.stop()
  })

  it('the agent page shows the request live; Allow runs the command', async () => {
    hub.model.enqueue({tool: {name: 'Bash', input: {command: 'echo one > one.txt', description: 'write one.txt'}}}, {text: 'Wrote one.txt.'})
    const r = await svc(['agent', 'create', 'fix', '--harness', 'claude', 'write one into one.txt', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    agent = r.json.agent
    // Opened before the request exists: it must arrive through the event stream.
    await page.goto(`${hub.server.url}/#/agents/${agent.id}`)
    await expect.poll(() => card(page).count(), FIRST).toBe(1)
    expect(await card(page).locator('[data-role=summary]').textContent()).toBe('echo one > one.txt')
    await expect.poll(() => page.locator('#needs-you').textContent(), POLL).toContain('Permission: Bash')
    expect(await unlabelledControls(page)).toEqual([])
    await screenshot(page, 'web-approval-agent-page')

    await card(page).getByRole('button', {name: 'Allow'}).click()
    await expect.poll(() => page.locator('#approval-outcome').textContent(), POLL).toContain('allowed')
    expect(await card(page).count()).toBe(0)
    await idleAfter(1)
    expect(readFileSync(join(agent.workspace.path, 'one.txt'), 'utf8')).toBe('one\n')
    const [decided] = (await hub.api(`/api/v1/agents/${agent.id}/approvals`)).approvals
    expect(decided).toMatchObject({state: 'allowed', decidedBy: {kind: 'user'}})
  })

  it('the inbox on a phone-sized screen lists the new request live; Deny with a reason refuses it and the model reads the reason', async () => {
    const phone = await (await browser.newContext({viewport: {width: 390, height: 844}, isMobile: true, hasTouch: true})).newPage()
    await signInPage(phone, hub.server.url, hub.token)
    await phone.goto(`${hub.server.url}/#/approvals`)
    await expect.poll(() => phone.locator('#approvals-empty').count(), POLL).toBe(1)

    hub.model.enqueue({tool: {name: 'Bash', input: {command: 'echo two > two.txt', description: 'write two.txt'}}}, {text: 'Not writing two.txt.'})
    const before = hub.model.mainRequests().length
    expect((await svc(['message', 'fix', 'now write two into two.txt'])).code).toBe(0)
    await expect.poll(() => card(phone).count(), POLL).toBe(1)
    expect(await card(phone).locator('[data-role=summary]').textContent()).toBe('echo two > two.txt')
    expect(await card(phone).getByRole('link', {name: 'fix'}).count()).toBe(1)
    // Nothing sticks out of a phone's screen.
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    expect(await unlabelledControls(phone)).toEqual([])
    await screenshot(phone, 'web-approvals-inbox-phone')

    await card(phone).getByRole('button', {name: 'Deny…'}).click()
    await card(phone).getByLabel('Reason for the model').fill('not on a Friday')
    await card(phone).getByRole('button', {name: 'Deny', exact: true}).click()
    await expect.poll(() => phone.locator('#approvals-decided').textContent(), POLL).toContain('denied')
    await expect.poll(() => phone.locator('#approvals-empty').count(), POLL).toBe(1)
    await hub.model.waitForRequest((q) => q.main && hub.model.mainRequests().indexOf(q) > before && userText(q.body).includes('not on a Friday'), 90_000, 'the deny reason as the tool result')
    await idleAfter(2)
    expect(existsSync(join(agent.workspace.path, 'two.txt'))).toBe(false)
    expect((await pendingOf()).length).toBe(0)
    await phone.close()
  })

  it('a request decided elsewhere leaves the inbox and the agent page without a reload', async () => {
    await page.goto(`${hub.server.url}/#/approvals`)
    hub.model.enqueue({tool: {name: 'Bash', input: {command: 'echo three > three.txt', description: 'write three.txt'}}}, {text: 'Wrote three.txt.'})
    expect((await svc(['message', 'fix', 'now write three into three.txt'])).code).toBe(0)
    await expect.poll(() => card(page).count(), POLL).toBe(1)
    await screenshot(page, 'web-approvals-inbox')
    const ok = await svc(['agent', 'approve', 'fix', '--json'])
    expect(ok.code, ok.stderr + ok.stdout).toBe(0)
    await expect.poll(() => card(page).count(), POLL).toBe(0)
    await idleAfter(3)
  })
})
