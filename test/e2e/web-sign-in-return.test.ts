import type {Browser} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {listen, rawRequest, sha256} from '../helpers/artifacts.js'
import {startTestHub, type TestHub} from '../helpers/hub.js'
import {launchChromium, screenshot, signInPage} from '../helpers/web-browser.js'

/**
 * A signed-out browser opening a page route (the artifact page `svc artifact publish` prints)
 * goes through sign-in and lands back on that page: on a workstation, the signed-out home page
 * names the `svc web` command for it, whose one-time link lands there. Real headless Chromium
 * against a real Hub on loopback.
 */
describe('signed-out browser on a page route', {timeout: 120_000}, () => {
  let hub: TestHub
  let base: string
  let browser: Browser
  let pagePath: string

  beforeAll(async () => {
    hub = await startTestHub('sqlite')
    base = await listen(hub)
    const project = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'return-pages'}})).body.project.id
    const body = Buffer.from('# Signed-in notes\n\nHello.\n')
    const r = await rawRequest('POST', `${base}/api/v1/artifacts?name=notes.md&scope=${project}`, {token: hub.devToken, body, headers: {'x-content-sha256': sha256(body)}})
    expect(r.status, r.body.toString()).toBe(201)
    pagePath = `/projects/${r.json.artifact.projectId}/artifacts/${r.json.artifact.id}?version=1`
    browser = await launchChromium()
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await hub?.dispose()
  })

  it('workstation: a signed-out browser on the artifact page is told the svc web command for it; its link lands back on the page', async () => {
    const page = await (await browser.newContext()).newPage()
    const first = await page.goto(`${base}${pagePath}`)
    expect(first).not.toBeNull()
    // Sent to the home page, which signs nobody in and names the command for this very page.
    await expect.poll(() => page.locator('#svc-web-command').textContent(), {timeout: 20_000}).toBe(`svc web '${pagePath}' --hub ${base}`)
    expect(await page.locator('#signed-in-as').count()).toBe(0)
    await screenshot(page, 'web-sign-in-return-signed-out')
    await signInPage(page, base, hub.devToken, pagePath)
    await expect.poll(() => page.url(), {timeout: 20_000}).toBe(`${base}${pagePath}`)
    await expect.poll(() => page.locator('article.markdown').textContent(), {timeout: 20_000}).toContain('Signed-in notes')
    await screenshot(page, 'web-sign-in-return-artifact')
    // The browser now holds a session: the page opens directly.
    const again = await page.goto(`${base}${pagePath}`)
    expect(again!.status()).toBe(200)
  })

  it('a request that is not a page navigation still gets the 401, not a redirect', async () => {
    const r = await rawRequest('GET', `${base}${pagePath}`, {token: null})
    expect(r.status).toBe(401)
  })

  it('return_to only ever leads to a path on this Hub', async () => {
    const page = await (await browser.newContext()).newPage()
    await page.goto(`${base}/?return_to=${encodeURIComponent('//evil.example/x')}`)
    // Signed out: the command names no page (the off-site return_to is dropped).
    await expect.poll(() => page.locator('#svc-web-command').textContent(), {timeout: 20_000}).toBe(`svc web --hub ${base}`)
    await signInPage(page, base, hub.devToken)
    await page.goto(`${base}/?return_to=${encodeURIComponent('//evil.example/x')}`)
    await expect.poll(() => page.locator('#signed-in-as').textContent(), {timeout: 20_000}).toContain('Signed in as')
    expect(new URL(page.url()).host).toBe(new URL(base).host)
  })
})
