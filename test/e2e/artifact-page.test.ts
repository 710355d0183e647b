import {mkdirSync} from 'node:fs'
import {join} from 'node:path'
import {chromium, type Browser, type BrowserContext} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {listen, makeUser, rawRequest, sha256} from '../helpers/artifacts.js'
import {startTestHub, type TestHub} from '../helpers/hub.js'
import {signInPage} from '../helpers/web-browser.js'

const OUT = join(process.cwd(), 'test-output')
const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
const REMOTE_HOST = 'images.remote.example'

/** The artifact page in real headless Chromium (Debian's, driven by playwright-core). */
describe('the artifact page in a browser', {timeout: 120_000}, () => {
  let hub: TestHub
  let base: string
  let project: string
  let browser: Browser
  let context: BrowserContext
  const requested: string[] = []

  const publish = async (name: string, body: Buffer | string) => {
    const b = Buffer.from(body)
    const r = await rawRequest('POST', `${base}/api/v1/artifacts?name=${encodeURIComponent(name)}&scope=${project}`, {token: hub.devToken, body: b, headers: {'x-content-sha256': sha256(b)}})
    expect(r.status, r.body.toString()).toBe(201)
    return r.json as {artifact: {id: string; projectId: string}; url: string}
  }
  const pagePath = (a: {artifact: {id: string; projectId: string}}) => `/projects/${a.artifact.projectId}/artifacts/${a.artifact.id}`

  beforeAll(async () => {
    mkdirSync(OUT, {recursive: true})
    hub = await startTestHub('sqlite')
    base = await listen(hub)
    project = (await hub.request('POST', '/api/v1/projects/register', {body: {name: 'pages'}})).body.project.id
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    })
    context = await browser.newContext({extraHTTPHeaders: {authorization: `Bearer ${hub.devToken}`}})
    context.on('request', (r) => requested.push(r.url()))
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await hub?.dispose()
  })

  it('renders Markdown: a remote image is not loaded and shows its alt text; an inline data image is shown', async () => {
    const md = [
      '# Release notes',
      '',
      'Some **bold** text and `code`.',
      '',
      `![architecture diagram](https://${REMOTE_HOST}/diagram.png)`,
      '',
      `![inline dot](data:image/png;base64,${PNG_1x1})`,
      '',
      '<script>document.title = "pwned"</script>',
      '',
      '[a link](javascript:alert(1))',
    ].join('\n')
    const a = await publish('notes.md', md)
    requested.length = 0
    const page = await context.newPage()
    const res = await page.goto(`${base}${pagePath(a)}`)
    expect(res?.status()).toBe(200)
    expect(res?.headers()['content-security-policy']).toMatch(/default-src 'none'; img-src 'self' data:/)
    await page.screenshot({path: join(OUT, 'artifact-page-markdown.png'), fullPage: true})

    expect(await page.locator('h1#artifact-title').textContent()).toBe('notes.md')
    expect(await page.locator('#artifact-owner').textContent()).toContain('Developer')
    expect(await page.locator('#artifact-version').textContent()).toBe('1')
    expect(await page.locator('#artifact-ref').textContent()).toBe(`svc://artifact/${a.artifact.id}@1`)
    expect(await page.locator('article.markdown h1').textContent()).toBe('Release notes')
    expect(await page.locator('article.markdown strong').textContent()).toBe('bold')

    const alt = page.locator('.img-alt')
    await expect.poll(() => alt.textContent()).toBe('architecture diagram')
    expect(await alt.isVisible()).toBe(true)
    const dataImg = page.locator('article.markdown img[alt="inline dot"]')
    expect(await dataImg.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1)
    expect(await page.locator(`img[src*="${REMOTE_HOST}"]`).count()).toBe(0)
    // Raw HTML is text, not markup; javascript: links are not links.
    expect(await page.title()).not.toBe('pwned')
    expect(await page.locator('article.markdown').textContent()).toContain('<script>')
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0)

    expect(requested.filter((u) => new URL(u).host === REMOTE_HOST)).toEqual([])
    expect(requested.every((u) => u.startsWith(base) || u.startsWith('data:'))).toBe(true)
    await page.close()
  })

  it('shows JSON, YAML and CSV in a read-only, line-numbered, escaped view', async () => {
    const json = await publish('config.json', '{\n  "name": "<b>not bold</b>",\n  "n": 1\n}\n')
    const page = await context.newPage()
    await page.goto(`${base}${pagePath(json)}`)
    await page.screenshot({path: join(OUT, 'artifact-page-json.png'), fullPage: true})
    const lines = page.locator('pre.code .line')
    expect(await lines.count()).toBe(4)
    expect(await lines.nth(1).textContent()).toBe('  "name": "<b>not bold</b>",')
    expect(await page.locator('pre.code b').count()).toBe(0)
    const number = await lines.nth(1).evaluate((el) => getComputedStyle(el, '::before').content)
    expect(number).toMatch(/counter\(line\)|"2"/)

    for (const [name, text] of [
      ['values.yaml', 'a: 1\nb: [x, y]\n'],
      ['table.csv', 'a,b\n1,2\n3,4\n'],
    ]) {
      const a = await publish(name, text)
      await page.goto(`${base}${pagePath(a)}`)
      expect(await page.locator('pre.code .line').count(), name).toBe(text.trim().split('\n').length)
    }
    await page.close()
  })

  it('shows PNG inline through the Hub, and offers HTML, SVG and PDF as downloads without rendering them', async () => {
    const png = await publish('dot.png', Buffer.from(PNG_1x1, 'base64'))
    const page = await context.newPage()
    requested.length = 0
    await page.goto(`${base}${pagePath(png)}`)
    const img = page.locator('.preview img')
    await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(1)
    expect(requested.some((u) => u.includes(`/api/v1/artifacts/${png.artifact.id}/versions/1/files/dot.png?stream=1`))).toBe(true)
    await page.screenshot({path: join(OUT, 'artifact-page-png.png'), fullPage: true})

    for (const name of ['page.html', 'logo.svg', 'paper.pdf']) {
      const a = await publish(name, name.endsWith('.pdf') ? '%PDF-1.4\n' : '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
      await page.goto(`${base}${pagePath(a)}`)
      const link = page.locator('a.download')
      expect(await link.getAttribute('href'), name).toBe(`/api/v1/artifacts/${a.artifact.id}/versions/1/files/${name}`)
      expect(await link.getAttribute('download')).toBe(name)
      expect(await page.locator('main iframe, main object, main embed, main svg').count()).toBe(0)
      if (name === 'page.html') await page.screenshot({path: join(OUT, 'artifact-page-download.png'), fullPage: true})
    }
    await page.close()
  })

  it('shows the current version, or the one named by ?version=', async () => {
    const a = await publish('changelog.txt', 'first\n')
    const body = Buffer.from('second\n')
    const v2 = await rawRequest('POST', `${base}/api/v1/artifacts/${a.artifact.id}/versions?name=changelog.txt`, {token: hub.devToken, body})
    expect(v2.status).toBe(201)
    const page = await context.newPage()
    await page.goto(`${base}${pagePath(a)}`)
    expect(await page.locator('#artifact-version').textContent()).toBe('2')
    expect(await page.locator('pre.code .line').first().textContent()).toBe('second')
    await page.goto(`${base}${pagePath(a)}?version=1`)
    expect(await page.locator('#artifact-version').textContent()).toBe('1 (current: 2)')
    expect(await page.locator('#artifact-ref').textContent()).toBe(`svc://artifact/${a.artifact.id}@1`)
    expect(await page.locator('pre.code .line').first().textContent()).toBe('first')
    expect((await page.goto(`${base}${pagePath(a)}?version=7`))?.status()).toBe(404)
    await page.close()
  })

  it('is authenticated like the API: the svc_session cookie works; no credential is sent to sign-in, and svc web\'s link brings it back; non-readers get 404', async () => {
    const a = await publish('private.txt', 'private\n')
    const anon = await browser.newContext()
    const p1 = await anon.newPage()
    const r1 = await p1.goto(`${base}${pagePath(a)}`)
    // Signed out: 303 to the web client's sign-in with the page to come back to.
    expect(r1?.request().redirectedFrom()?.url()).toBe(`${base}${pagePath(a)}`)
    expect(new URL(r1!.url()).searchParams.get('return_to')).toBe(pagePath(a))
    // Nothing signs a browser in for coming from loopback: the page says which `svc web` brings it back here.
    await expect.poll(() => p1.locator('#svc-web-command').textContent(), {timeout: 20_000}).toMatch(new RegExp(`^svc web '?${pagePath(a)}'?( --hub \\S+)?$`))
    expect(p1.url()).not.toBe(`${base}${pagePath(a)}`)
    // The one-time link of `svc web <page>` signs it in and lands on the artifact page.
    await signInPage(p1, base, hub.devToken, pagePath(a))
    await expect.poll(() => p1.url(), {timeout: 20_000}).toBe(`${base}${pagePath(a)}`)
    await anon.clearCookies()

    const outsider = await makeUser(hub, 'outsider')
    await anon.addCookies([{name: 'svc_session', value: outsider.token, url: base}])
    const r2 = await p1.goto(`${base}${pagePath(a)}`)
    expect(r2?.status()).toBe(404)

    const member = await makeUser(hub, 'member')
    await hub.request('POST', `/api/v1/projects/${project}/members`, {body: {userId: member.id, role: 'member'}})
    await anon.clearCookies()
    await anon.addCookies([{name: 'svc_session', value: member.token, url: base}])
    const r3 = await p1.goto(`${base}${pagePath(a)}`)
    expect(r3?.status()).toBe(200)
    expect(await p1.locator('pre.code .line').first().textContent()).toBe('private')
    // Under another project's path the artifact is not found.
    const r4 = await p1.goto(`${base}/projects/other-project/artifacts/${a.artifact.id}`)
    expect(r4?.status()).toBe(404)
    await anon.close()
  })
})
