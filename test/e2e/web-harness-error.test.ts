import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import type {Browser, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {requestJson} from '../../src/client/http.js'
import {startLocalRuntimeServer, type RunningServer} from '../helpers/cli.js'
import {tmuxAt} from '../helpers/live-hub.js'
import {launchChromium, screenshot, signInPage} from '../helpers/web-browser.js'

/**
 * Issue 30 item 3 on the pages: a running agent whose harness reported a failure (its `error`)
 * is red on the project's agent list and on its own page, live from the event stream, and goes
 * back to normal once the harness works again (a report without `error`).
 */
describe('web: a harness failure is shown red', {timeout: 180_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-weberr-'))
  const tmuxDir = mkdtempSync(join(tmpdir(), 'svc-e2e-weberr-tmux-'))
  let server: RunningServer
  let devToken: string
  let browser: Browser
  let page: Page
  const api = async (method: string, path: string, body?: unknown): Promise<any> => (await requestJson(method, `${server.url}${path}`, {token: devToken, ...(body !== undefined && {body})})).body

  beforeAll(async () => {
    ;({server} = await startLocalRuntimeServer(home, tmuxDir))
    devToken = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    browser = await launchChromium()
    page = await (await browser.newContext()).newPage()
    await signInPage(page, server.url, devToken)
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    tmuxAt(tmuxDir, ['kill-server'])
    for (const d of [home, tmuxDir]) rmSync(d, {recursive: true, force: true})
  })

  it('list and agent page: red row, Error badge and notice while the error stands; cleared by the next activity', async () => {
    const project = (await api('GET', '/api/v1/projects')).projects[0]
    const {agent} = await api('POST', '/api/v1/agents', {name: 'unlucky', projectId: project.id, harnessConfig: 'shell'})
    await page.goto(`${server.url}/#/agents?project=${encodeURIComponent(project.id)}`)
    const row = page.locator(`svc-agents tr[data-agent="${agent.id}"]`)
    await expect.poll(() => row.locator('[data-col="phase"]').textContent()).toBe('running')
    expect(await row.getAttribute('class')).not.toContain('failed')
    expect(await row.locator('[data-role="harness-error"]').count()).toBe(0)

    const failure = 'API Error: Unable to connect to API (ConnectionRefused) (server_error)'
    await api('POST', `/api/v1/agents/${agent.id}/status`, {activity: 'idle', detail: failure, error: failure})
    await expect.poll(() => row.getAttribute('class'), {timeout: 20_000}).toContain('failed')
    expect(await row.locator('[data-role="harness-error"]').textContent()).toBe('Error')
    const red = await row.evaluate((el) => getComputedStyle(el).backgroundColor)
    expect(red).toBe('rgb(253, 238, 238)')
    await screenshot(page, 'web-harness-error-list')

    await page.goto(`${server.url}/#/agents/${encodeURIComponent(agent.id)}`)
    const notice = page.locator('svc-agent #agent-error')
    await expect.poll(() => notice.textContent(), {timeout: 20_000}).toContain(failure)
    expect(await notice.getAttribute('role')).toBe('alert')
    await screenshot(page, 'web-harness-error-agent')

    // The harness works again: no error, no red, live.
    await api('POST', `/api/v1/agents/${agent.id}/status`, {activity: 'thinking'})
    await expect.poll(() => notice.count(), {timeout: 20_000}).toBe(0)
    expect(await page.locator('svc-agent [data-role="harness-error"]').count()).toBe(0)
    expect((await api('GET', `/api/v1/agents/${agent.id}`)).agent.error).toBeNull()
  })
})
