import type {Browser, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startSignInHub, type SignInHub} from '../helpers/sign-in-hub.js'
import {launchChromium, screenshot} from '../helpers/web-browser.js'

/**
 * A hosted Hub in real headless Chromium: sign-in with OpenID Connect (a real provider), tabs
 * gated by the permissions of GET /api/v1/admin/status, and bootstrap keys read-only.
 */
describe('the web client of a hosted Hub', {timeout: 120_000}, () => {
  let s: SignInHub
  let browser: Browser

  beforeAll(async () => {
    s = await startSignInHub('sqlite', {env: {SVC_SERVER_MODE: 'hosted', SVC_SERVER_HUB_ADMINEMAILS: 'root@example.com'}})
    browser = await launchChromium()
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await s?.dispose()
  })

  /** Opens the Hub in a fresh browser and signs in at the provider's pages as `login`. */
  async function signIn(login: string, hash = ''): Promise<Page> {
    const page = await (await browser.newContext()).newPage()
    await page.goto(`${s.url}/${hash}`)
    const link = page.getByRole('link', {name: 'Sign in with your identity provider'})
    await link.waitFor()
    await screenshot(page, 'web-hosted-sign-in')
    await link.click()
    // The provider's development pages: a login form, then consent, then back to the Hub.
    await page.waitForURL((u) => !u.href.startsWith(s.url))
    for (let step = 0; step < 10 && !page.url().startsWith(s.url); step++) {
      const before = page.url()
      const loginBox = page.locator('input[name="login"]')
      if (await loginBox.count()) {
        await loginBox.fill(login)
        await page.locator('input[name="password"]').fill('any')
      }
      await Promise.all([page.waitForURL((u) => u.href !== before), page.locator('button[type="submit"]').first().click()])
    }
    await page.locator('#signed-in-as').waitFor()
    return page
  }

  it('signs in with OpenID Connect; a user who is not an admin sees no admin tab and cannot open one', async () => {
    const page = await signIn('alice', '#/projects')
    expect(new URL(page.url()).hash).toBe('#/projects')
    expect(await page.locator('#signed-in-as').textContent()).toBe('Signed in as Alice Example')
    expect(await page.locator('nav a').allTextContents()).toEqual(['Projects', 'Agents'])
    await page.goto(`${s.url}/#/settings`)
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('You do not have permission to open Settings.')
    await screenshot(page, 'web-hosted-member')
  })

  it('a template-only role sees only the Templates admin tab', async () => {
    const page = await signIn('carol')
    // No built-in Hub role holds only admin.templates.manage yet: the status answer is narrowed
    // to what such a role would receive, and the client must gate on it alone.
    await page.route('**/api/v1/admin/status', async (route) => {
      const res = await route.fetch()
      await route.fulfill({response: res, json: {...(await res.json()), permissions: ['admin.templates.manage']}})
    })
    await page.goto(`${s.url}/#/templates`)
    await page.reload()
    await page.getByRole('heading', {name: 'Templates'}).waitFor()
    expect(await page.locator('nav a').allTextContents()).toEqual(['Projects', 'Agents', 'Templates'])
    for (const tab of ['settings', 'maintenance', 'profiling', 'adoption']) {
      await page.goto(`${s.url}/#/${tab}`)
      await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^You do not have permission to open /)
    }
    await screenshot(page, 'web-hosted-template-only')
  })

  it('an admin sees the bootstrap keys read-only, set by the deployment', async () => {
    const page = await signIn('root', '#/settings')
    expect(await page.locator('#signed-in-as').textContent()).toContain('(system admin)')
    const boot = page.locator('svc-settings-section[data-section="bootstrap"]')
    const port = boot.locator('svc-field[data-key="server.hub.port"]')
    await port.waitFor()
    expect(await port.locator('input').getAttribute('readonly')).not.toBeNull()
    expect(await port.locator('label').textContent()).toContain('set by the deployment')
    expect(await boot.getByRole('button', {name: 'Save bootstrap settings'}).count()).toBe(0)
    // Layer-1 sections stay editable.
    expect(await page.locator('svc-settings-section[data-section="hub"] svc-field[data-key="server.hub.hub_name"] input').getAttribute('readonly')).toBeNull()
    await screenshot(page, 'web-hosted-settings')
  })

  it('signs out: the session is revoked and the page offers sign-in again', async () => {
    const page = await signIn('alice')
    const cookie = (await page.context().cookies(s.url)).find((c) => c.name === 'svc_session')!
    await page.getByRole('button', {name: 'Sign out'}).click()
    await page.getByRole('link', {name: 'Sign in with your identity provider'}).waitFor()
    const me = await s.hub.request('GET', '/api/v1/auth/me', {token: cookie.value})
    expect(me.status).toBe(401)
  })
})
