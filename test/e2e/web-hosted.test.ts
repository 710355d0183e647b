import type {Browser, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startSignInHub, type SignInHub} from '../helpers/sign-in-hub.js'
import {launchChromium, screenshot} from '../helpers/web-browser.js'

/**
 * A hosted Hub in real headless Chromium: sign-in with OpenID Connect (a real provider), tabs
 * gated by the permissions of GET /api/v1/admin/status (a plain user, a template_admin Hub role,
 * a system admin), and bootstrap keys read-only.
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
    expect(await page.locator('nav a').allTextContents()).toEqual(['Projects', 'Agents', 'Approvals'])
    await page.goto(`${s.url}/#/settings`)
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('You do not have permission to open Settings.')
    await screenshot(page, 'web-hosted-member')
  })

  it('a template_admin sees only the Templates admin tab, uploads a hub-wide template, and is refused the other admin pages and their API', async () => {
    const page = await signIn('carol')
    const cookie = (await page.context().cookies(s.url)).find((c) => c.name === 'svc_session')!.value
    const me = await s.hub.request('GET', '/api/v1/auth/me', {token: cookie})
    expect(me.status).toBe(200)
    // Before the role, carol is a plain user: no admin tab.
    expect(await page.locator('nav a').allTextContents()).toEqual(['Projects', 'Agents', 'Approvals'])
    // A system admin signed in at the same provider gives carol the template_admin Hub role.
    const root = await s.signIn('root')
    const set = await s.hub.request('PATCH', `/api/v1/users/${me.body.principal.id}`, {token: root.token, body: {hubRole: 'template_admin'}})
    expect(set.status).toBe(200)
    expect(set.body.user.hubRole).toBe('template_admin')

    await page.goto(`${s.url}/#/templates`)
    await page.reload()
    await page.getByRole('heading', {name: 'Templates'}).waitFor()
    expect(await page.locator('nav a').allTextContents()).toEqual(['Projects', 'Agents', 'Approvals', 'Templates'])
    // The upload form sends the files with their SHA-256; the Hub stores a hub-wide template.
    await page.getByLabel('Name').fill('house-style')
    await page.getByLabel('Files').setInputFiles([{name: 'style.md', mimeType: 'text/markdown', buffer: Buffer.from('tabs\n')}])
    await page.getByRole('button', {name: 'Upload'}).click()
    await expect.poll(() => page.locator('svc-templates [role="status"]').textContent()).toBe('Uploaded hub-wide template house-style.')
    expect(await page.getByRole('table', {name: 'Templates'}).locator('tbody tr').allTextContents()).toEqual(['house-stylehub-wide1'])
    const stored = (await s.hub.request('GET', '/api/v1/templates', {token: cookie})).body.templates
    expect(stored).toMatchObject([{name: 'house-style', projectId: null, currentVersion: 1, createdBy: me.body.principal.id}])

    for (const tab of ['settings', 'maintenance', 'profiling', 'adoption']) {
      await page.goto(`${s.url}/#/${tab}`)
      await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^You do not have permission to open /)
    }
    // The API behind those pages refuses the same session, from the page itself.
    const statuses = await page.evaluate(async () => {
      const paths = ['/api/v1/admin/server-config', '/api/v1/admin/maintenance', '/api/v1/admin/profiling', '/api/v1/admin/delegation-adoption', '/api/v1/users']
      return Promise.all(paths.map(async (p) => [p, (await fetch(p, {credentials: 'same-origin'})).status]))
    })
    expect(statuses.map(([, status]) => status)).toEqual([403, 403, 403, 403, 403])
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
