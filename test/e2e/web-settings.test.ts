import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import type {Browser, BrowserContext, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {listen} from '../helpers/artifacts.js'
import {startTestHub, type TestHub} from '../helpers/hub.js'
import {launchChromium, screenshot, SCREENSHOTS, signInPage, unlabelledControls} from '../helpers/web-browser.js'

const FILE = {'.svc/settings.yaml': 'schema_version: "1"\nserver:\n  hub:\n    hub_name: From File\n'}

/**
 * The admin settings page of a workstation Hub in real headless Chromium: the browser signs in as
 * the dev user by itself, and every Layer-1 section can be saved, conflicts reload, and reset.
 */
describe('the web settings page (workstation Hub)', {timeout: 120_000}, () => {
  let hub: TestHub
  let base: string
  let browser: Browser
  let context: BrowserContext
  let page: Page

  const section = (name: string) => page.locator(`svc-settings-section[data-section="${name}"]`)
  const field = (sectionName: string, key: string) => section(sectionName).locator(`svc-field[data-key="${key}"]`)
  const config = async () => (await hub.request('GET', '/api/v1/admin/server-config')).body
  const openSettings = async () => {
    await page.goto(`${base}/#/settings`)
    await section('hub').locator('[data-meta="revision"]').waitFor()
  }

  beforeAll(async () => {
    hub = await startTestHub('sqlite', {files: FILE})
    base = await listen(hub)
    browser = await launchChromium()
    context = await browser.newContext()
    page = await context.newPage()
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await hub?.dispose()
  })

  it('signs the browser in as the dev user with a one-time link (svc web) and an httpOnly session cookie', async () => {
    await signInPage(page, base, hub.devToken)
    await expect.poll(() => page.locator('#signed-in-as').textContent()).toBe('Signed in as Developer (system admin)')
    const cookie = (await context.cookies(base)).find((c) => c.name === 'svc_session')
    expect(cookie).toMatchObject({httpOnly: true, sameSite: 'Strict', path: '/'})
    // A web session, not the dev credential itself.
    expect(cookie!.value).not.toBe(hub.devToken)
    expect(await page.locator('nav a').allTextContents()).toEqual(['Projects', 'Agents', 'Approvals', 'Settings', 'Maintenance', 'Profiling', 'Templates', 'Delegation adoption'])
    await expect.poll(() => page.locator('svc-projects tr[data-project] td').first().textContent()).toBe('default')
    await screenshot(page, 'web-signed-in-projects')
  })

  it('shows every Layer-1 section with origin, source, revision and last update; seeded ones track the deployment', async () => {
    await openSettings()
    const shown = await page.locator('svc-settings-section[data-section]').evaluateAll((els) => els.map((e) => e.getAttribute('data-section')))
    expect(shown).toEqual([...Object.keys((await config()).sections), 'bootstrap'])
    const hubSection = section('hub')
    expect(await hubSection.locator('[data-meta="origin"]').textContent()).toBe('seeded')
    expect(await hubSection.locator('[data-meta="source"]').textContent()).toBe('settings_file')
    expect(await hubSection.locator('[data-meta="revision"]').textContent()).toBe('1')
    expect(await hubSection.locator('[data-meta="updated"]').textContent()).toMatch(/^\d{4}-\d\d-\d\dT.* by bootstrap$/)
    expect(await hubSection.locator('[data-meta="origin-text"]').textContent()).toContain('Tracks the deployment')
    expect(await field('hub', 'server.hub.hub_name').locator('input').inputValue()).toBe('From File')
    // Read-only defaults are shown read-only; Layer-0 keys of a workstation Hub apply at restart.
    const role = field('agent_defaults', 'default_agent_role')
    expect(await role.locator('input').getAttribute('readonly')).not.toBeNull()
    expect(await role.locator('label').textContent()).toContain('read-only')
    const port = field('bootstrap', 'server.hub.port')
    expect(await port.locator('label').textContent()).toContain('takes effect at restart')
    expect(await port.locator('input').getAttribute('readonly')).toBeNull()
    expect(await unlabelledControls(page)).toEqual([])
    // The section index moves the focus to the section's heading.
    await page.getByRole('navigation', {name: 'Settings sections'}).getByRole('button', {name: 'quotas', exact: true}).click()
    expect(await section('quotas').locator('h3').evaluate((h) => h.matches(':focus'))).toBe(true)
    await screenshot(page, 'web-settings')
  })

  it('edits and saves a section with the keyboard; a managed section whose bootstrap differs says it is superseded', async () => {
    await openSettings()
    const input = field('hub', 'server.hub.hub_name').locator('input')
    await input.focus()
    await page.keyboard.press('Control+A')
    await page.keyboard.type('Team Hub')
    // Tab through the rest of the section's fields to its Save button, then press Enter.
    const save = section('hub').getByRole('button', {name: 'Save hub'})
    for (let i = 0; i < 40 && !(await save.evaluate((b) => b.matches(':focus'))); i++) await page.keyboard.press('Tab')
    await page.keyboard.press('Enter')
    const message = section('hub').locator('[data-role="message"]')
    await expect.poll(() => message.textContent()).toContain('Saved (revision 2)')
    expect((await config()).server.hub.hub_name).toBe('Team Hub')
    await expect.poll(() => section('hub').locator('[data-meta="origin"]').textContent()).toBe('managed')
    expect(await section('hub').locator('[data-meta="superseded"]').textContent()).toContain('Superseded')
    await screenshot(page, 'web-settings-saved')
  })

  it('shows the Hub\'s validation errors inline, on the field', async () => {
    await openSettings()
    const tz = field('agent_defaults', 'default_timezone')
    await tz.locator('input').fill('Mars/Olympus_Mons')
    await section('agent_defaults').getByRole('button', {name: 'Save agent_defaults'}).click()
    await expect.poll(() => tz.locator('[role="alert"]').textContent()).toContain('not an IANA time zone name')
    expect(await tz.locator('input').getAttribute('aria-invalid')).toBe('true')
    expect((await config()).default_timezone ?? null).not.toBe('Mars/Olympus_Mons')
    await screenshot(page, 'web-settings-invalid')
  })

  it('a section changed through the API after the page loaded is a conflict with a Reload action', async () => {
    await openSettings()
    const rev = (await config()).sections.hub.revision
    const other = await hub.request('PUT', '/api/v1/admin/server-config', {body: {server: {hub: {hub_name: 'Changed Elsewhere'}}, revisions: {hub: rev}}})
    expect(other.status).toBe(200)
    const input = field('hub', 'server.hub.hub_name').locator('input')
    await input.fill('Mine')
    await section('hub').getByRole('button', {name: 'Save hub'}).click()
    const message = section('hub').locator('[data-role="message"]')
    await expect.poll(() => message.textContent()).toContain('Someone else changed this section')
    expect((await config()).server.hub.hub_name).toBe('Changed Elsewhere')
    await screenshot(page, 'web-settings-conflict')
    await section('hub').getByRole('button', {name: 'Reload section'}).click()
    await expect.poll(() => input.inputValue()).toBe('Changed Elsewhere')
    expect(await section('hub').locator('[data-meta="revision"]').textContent()).toBe(String(rev + 1))
    await input.fill('Mine after reload')
    await section('hub').getByRole('button', {name: 'Save hub'}).click()
    await expect.poll(() => message.textContent()).toContain(`Saved (revision ${rev + 2})`)
    expect((await config()).server.hub.hub_name).toBe('Mine after reload')
  })

  it('resets a section to bootstrap after a confirmation', async () => {
    await openSettings()
    await section('hub').getByRole('button', {name: 'Reset hub to bootstrap'}).click()
    await section('hub').getByRole('button', {name: 'Confirm reset of hub'}).click()
    await expect.poll(() => section('hub').locator('[data-meta="origin"]').textContent()).toBe('seeded')
    expect(await field('hub', 'server.hub.hub_name').locator('input').inputValue()).toBe('From File')
    expect(await section('hub').locator('[data-meta="superseded"]').count()).toBe(0)
    const c = await config()
    expect(c.server.hub.hub_name).toBe('From File')
    expect(c.sections.hub.origin).toBe('seeded')
    await screenshot(page, 'web-settings-reset')
  })

  it('saves a bootstrap key to the settings file of a workstation Hub, saying it takes effect at restart', async () => {
    await openSettings()
    const port = field('bootstrap', 'server.hub.port').locator('input')
    await port.fill('9876')
    await section('bootstrap').getByRole('button', {name: 'Save bootstrap settings'}).click()
    await expect.poll(() => section('bootstrap').locator('[data-role="message"]').textContent()).toContain('Takes effect when the Hub restarts.')
    expect(readFileSync(join(hub.home, '.svc', 'settings.yaml'), 'utf8')).toMatch(/port: 9876/)
  })

  it('a map section (harness_configs) saves as a merge patch: an added entry keeps the others, a removed one is sent as null', async () => {
    const claude = {env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010'}}
    const broken = {harness: 'claude', env: {ANTHROPIC_BASE_URL: 'http://127.0.0.1:9'}}
    expect((await hub.request('PUT', '/api/v1/admin/server-config', {body: {harness_configs: {claude}}})).status).toBe(200)
    await openSettings()
    // The page may already show #/settings as loaded before that save: load it again.
    await page.reload()
    await section('harness_configs').locator('[data-meta="revision"]').waitFor()
    const box = field('harness_configs', 'harness_configs').locator('textarea')
    await expect.poll(async () => JSON.parse(await box.inputValue())).toEqual({claude})
    const save = async (value: unknown) => {
      const rev = (await config()).sections.harness_configs.revision
      await box.fill(JSON.stringify(value, null, 2))
      const sent = page.waitForRequest((r) => r.method() === 'PUT' && r.url().endsWith('/api/v1/admin/server-config'))
      await section('harness_configs').getByRole('button', {name: 'Save harness_configs'}).click()
      await expect.poll(() => section('harness_configs').locator('[data-role="message"]').textContent()).toContain(`Saved (revision ${rev + 1})`)
      return {body: (await sent).postDataJSON(), rev}
    }
    // Adding `broken` sends only `broken` (the body carries only changed fields); `claude` stays.
    const added = await save({claude, broken})
    expect(added.body).toEqual({harness_configs: {broken}, revisions: {harness_configs: added.rev}})
    expect((await config()).harness_configs).toEqual({claude, broken})
    await expect.poll(async () => JSON.parse(await box.inputValue())).toEqual({claude, broken})
    await section('harness_configs').screenshot({path: join(SCREENSHOTS, 'web-settings-harness-configs-merged.png')})
    // A nested change sends only that field.
    const model = await save({claude: {...claude, model: 'opus'}, broken})
    expect(model.body).toEqual({harness_configs: {claude: {model: 'opus'}}, revisions: {harness_configs: model.rev}})
    // Removing `claude` in the editor sends null for it and removes only it.
    const removed = await save({broken})
    expect(removed.body).toEqual({harness_configs: {claude: null}, revisions: {harness_configs: removed.rev}})
    expect((await config()).harness_configs).toEqual({broken})
    await expect.poll(async () => JSON.parse(await box.inputValue())).toEqual({broken})
    await section('harness_configs').screenshot({path: join(SCREENSHOTS, 'web-settings-harness-configs-removed.png')})
  })

  it('turns maintenance on and off; the shell shows a banner while it is on', async () => {
    await page.goto(`${base}/#/maintenance`)
    await page.locator('#maintenance-message').fill('Upgrading the database')
    await page.getByRole('button', {name: 'Turn maintenance on'}).click()
    await expect.poll(() => page.locator('#maintenance-state').textContent()).toContain('Maintenance is on')
    await page.locator('#maintenance-banner').waitFor()
    expect((await hub.request('GET', '/api/v1/admin/maintenance')).body).toMatchObject({enabled: true, message: 'Upgrading the database'})
    expect(await unlabelledControls(page)).toEqual([])
    await screenshot(page, 'web-maintenance-on')
    await page.getByRole('button', {name: 'Turn maintenance off'}).click()
    await expect.poll(() => page.locator('#maintenance-state').textContent()).toContain('Maintenance is off')
    await page.locator('#maintenance-banner').waitFor({state: 'detached'})
    expect((await hub.request('GET', '/api/v1/admin/maintenance')).body.enabled).toBe(false)
  })

  it('writes readiness performance marks only while profiling.readiness_marks is on', async () => {
    const marks = () => page.evaluate(() => performance.getEntriesByType('mark').map((m) => m.name))
    await page.goto(`${base}/#/profiling`)
    const box = page.getByLabel(/Readiness performance marks/)
    await box.waitFor()
    expect(await box.isChecked()).toBe(false)
    await page.reload()
    await page.locator('svc-profiling #readiness').waitFor()
    expect(await marks()).toEqual([])
    await page.getByLabel(/Readiness performance marks/).check()
    await expect.poll(async () => (await hub.request('GET', '/api/v1/admin/profiling')).body.readiness_marks).toBe(true)
    await page.goto(`${base}/#/settings`)
    await page.reload()
    await expect.poll(marks).toEqual(expect.arrayContaining(['svc:shell:ready', 'svc:settings:ready']))
    await page.goto(`${base}/#/profiling`)
    await page.getByLabel(/Readiness performance marks/).uncheck()
    await expect.poll(async () => (await hub.request('GET', '/api/v1/admin/profiling')).body.readiness_marks).toBe(false)
  })
})
