import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import type {Browser, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {requestJson} from '../../src/client/http.js'
import {startLocalRuntimeServer, type RunningServer} from '../helpers/cli.js'
import {tmuxAt} from '../helpers/live-hub.js'
import {launchChromium, screenshot, signInPage, unlabelledControls} from '../helpers/web-browser.js'

/**
 * Records every desktop notification the page constructs (window.__notes), then makes the real
 * one (Chromium's, with the permission granted to the context).
 */
const WRAP_NOTIFICATION = `(() => {
  const Real = window.Notification
  window.__notes = []
  function Wrapped(title, options) {
    window.__notes.push({title, body: options && options.body, tag: options && options.tag})
    try { return new Real(title, options) } catch (e) { return {} }
  }
  Object.defineProperty(Wrapped, 'permission', {get: () => Real.permission})
  Wrapped.requestPermission = (...a) => Real.requestPermission(...a)
  window.Notification = Wrapped
})()`

/**
 * The agent pages follow GET /api/v1/events (no polling): an agent that starts waiting for input
 * is shown as "Needs you" on the project's agent list and its own page, and its owner gets a
 * desktop notification when the browser allows them.
 */
describe('web: live agent pages, "needs you" and desktop notifications', {timeout: 180_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-webev-'))
  const tmuxDir = mkdtempSync(join(tmpdir(), 'svc-e2e-webev-tmux-'))
  let server: RunningServer
  let devToken: string
  let browser: Browser
  let page: Page
  const listReads: string[] = []
  const api = async (method: string, path: string, body?: unknown): Promise<any> => (await requestJson(method, `${server.url}${path}`, {token: devToken, ...(body !== undefined && {body})})).body
  const notes = () => page.evaluate(() => (window as unknown as {__notes: Array<{title: string; body: string; tag: string}>}).__notes)

  beforeAll(async () => {
    ;({server} = await startLocalRuntimeServer(home, tmuxDir))
    devToken = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    browser = await launchChromium()
    const context = await browser.newContext()
    await context.grantPermissions(['notifications'], {origin: server.url})
    await context.addInitScript(WRAP_NOTIFICATION)
    page = await context.newPage()
    await signInPage(page, server.url, devToken)
    page.on('request', (r) => {
      if (r.method() === 'GET' && new URL(r.url()).pathname === '/api/v1/agents') listReads.push(r.url())
    })
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    tmuxAt(tmuxDir, ['kill-server'])
    for (const d of [home, tmuxDir]) rmSync(d, {recursive: true, force: true})
  })

  it('the project\'s agent list follows the event stream; waiting for input shows "Needs you" and notifies the owner', async () => {
    const project = (await api('GET', '/api/v1/projects')).projects[0]
    const {agent} = await api('POST', '/api/v1/agents', {name: 'asker', projectId: project.id, harnessConfig: 'shell'})
    await page.goto(`${server.url}/#/agents?project=${encodeURIComponent(project.id)}`)
    const row = page.locator(`svc-agents tr[data-agent="${agent.id}"]`)
    await expect.poll(() => row.locator('[data-col="phase"]').textContent()).toBe('running')
    // Nothing is read again while nothing changes (a 2 s poll would have read twice by now).
    const before = listReads.length
    await new Promise((r) => setTimeout(r, 4500))
    expect(listReads.length).toBe(before)

    await api('POST', `/api/v1/agents/${agent.id}/status`, {activity: 'waiting_for_input', detail: 'Allow Bash: git push?'})
    await expect.poll(() => row.locator('[data-role="needs-you"]').textContent(), {timeout: 20_000}).toBe('Needs you')
    expect(await page.locator('svc-agents #needs-you-count').textContent()).toContain('1 agent(s) need you')
    await expect.poll(notes, {timeout: 20_000}).toEqual([{title: 'asker needs you', body: 'Allow Bash: git push?', tag: `svc-agent-${agent.id}`}])
    expect(listReads.length).toBe(before)
    await screenshot(page, 'web-needs-you-list')

    // Back to work, then waiting again: a second notification; other activities none.
    await api('POST', `/api/v1/agents/${agent.id}/status`, {activity: 'thinking'})
    await expect.poll(() => row.locator('[data-col="activity"]').textContent(), {timeout: 20_000}).toBe('thinking')
    expect(await row.locator('[data-role="needs-you"]').count()).toBe(0)
    await api('POST', `/api/v1/agents/${agent.id}/status`, {activity: 'waiting_for_input', detail: 'Continue?'})
    await expect.poll(async () => (await notes()).length, {timeout: 20_000}).toBe(2)
    expect(await unlabelledControls(page)).toEqual([])
  })

  it('the agent page shows the "needs you" notice and its usage, live', async () => {
    const {agents} = await api('GET', '/api/v1/agents')
    const asker = agents.find((a: {name: string}) => a.name === 'asker')
    await page.locator(`svc-agents tr[data-agent="${asker.id}"]`).getByRole('link', {name: 'asker'}).click()
    await expect.poll(() => page.locator('svc-agent #needs-you').textContent(), {timeout: 20_000}).toContain('This agent needs you: Continue?')
    expect(await page.locator('svc-agent #agent-usage').textContent()).toBe('none reported')
    await api('POST', `/api/v1/agents/${asker.id}/status`, {activity: 'thinking', usage: {sessionId: 's1', inputTokens: 12000, outputTokens: 3400, modelCalls: 5, costUsd: 0.42}})
    await expect.poll(() => page.locator('svc-agent #agent-cost').textContent(), {timeout: 20_000}).toBe('$0.4200')
    expect(await page.locator('svc-agent #agent-tokens').textContent()).toBe('12,000 in, 3,400 out')
    expect(await page.locator('svc-agent #needs-you').count()).toBe(0)
    await screenshot(page, 'web-agent-usage')
  })

  it('the Settings page shows webhook delivery problems to a system admin', async () => {
    // Nothing listens on port 1: every attempt fails with ECONNREFUSED.
    await api('PUT', '/api/v1/admin/server-config', {server: {notification_channels: [{type: 'webhook', url: 'http://127.0.0.1:1/hook', allow_private: true}]}})
    const {agents} = await api('GET', '/api/v1/agents')
    const asker = agents.find((a: {name: string}) => a.name === 'asker')
    await api('POST', `/api/v1/agents/${asker.id}/status`, {activity: 'idle'})
    await expect.poll(async () => (await api('GET', '/api/v1/admin/status')).notifications.problems.length, {timeout: 20_000}).toBeGreaterThan(0)
    // Settings is an item of the Admin menu.
    await page.locator('#admin-menu summary').click()
    await page.getByRole('link', {name: 'Settings'}).click()
    const box = page.locator('svc-settings #notification-deliveries')
    await expect.poll(() => box.textContent(), {timeout: 20_000}).toContain('Webhook deliveries (1 channel)')
    expect(await box.getByRole('table', {name: 'Failed webhook deliveries'}).textContent()).toContain('http://127.0.0.1:1/hook')
    await api('PUT', '/api/v1/admin/server-config', {server: {notification_channels: []}})
  })
})
