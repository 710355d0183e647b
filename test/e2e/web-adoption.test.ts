import type {Browser, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {listen} from '../helpers/artifacts.js'
import {ADOPTION, legacyAgents, newProject, previewFor} from '../helpers/adoption.js'
import {startTestHub, type TestHub} from '../helpers/hub.js'
import {launchChromium, screenshot, signInPage, unlabelledControls} from '../helpers/web-browser.js'

/**
 * The delegation adoption view in real headless Chromium: counts, records with filters and
 * paging, `notInCohort`, and preview-then-commit for adopt and revert, with the hops and
 * ceilings on screen before anything is written.
 */
describe('the web delegation adoption view', {timeout: 120_000}, () => {
  let hub: TestHub
  let base: string
  let browser: Browser
  let page: Page
  let projectId: string
  let root: string
  let child: string

  const records = async (q: string) => (await hub.request('GET', `${ADOPTION}?${q}`)).body
  const view = () => page.locator('svc-adoption')
  const plan = () => page.locator('svc-adoption-plan')

  beforeAll(async () => {
    hub = await startTestHub('sqlite')
    base = await listen(hub)
    projectId = await newProject(hub, 'web-adopt')
    ;[root] = await legacyAgents(hub, [{projectId, by: 'dev-user', role: 'full'}])
    ;[child] = await legacyAgents(hub, [{projectId, by: {agent: root}, role: 'baseline'}])
    browser = await launchChromium()
    page = await (await browser.newContext()).newPage()
    await signInPage(page, base, hub.devToken)
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await hub?.dispose()
  })

  it('shows counts, records and the unrecorded hops outside the cohort', async () => {
    await page.goto(`${base}/#/adoption`)
    const notInCohort = view().locator('svc-hops[label="Not in cohort"]')
    await expect.poll(() => notInCohort.locator('tr[data-edge] td:first-child').allTextContents()).toEqual(expect.arrayContaining([root, child]))
    await view().getByLabel('Filter by project ID').fill(projectId)
    await view().getByLabel('Filter by project ID').press('Enter')
    await expect.poll(() => view().locator('#page-info').textContent()).toBe('No records')
    expect(await unlabelledControls(page)).toEqual([])
    await screenshot(page, 'web-adoption-status')
  })

  it('previews an adoption with its hops and ceilings, writes nothing, then commits it', async () => {
    await plan().getByLabel('Project ID').fill(projectId)
    await plan().getByRole('button', {name: 'Preview'}).click()
    const preview = plan().locator('#preview')
    await expect.poll(() => preview.getByRole('status').textContent()).toContain('Preview of adopt: 2 adopt')
    const hops = preview.locator('tr[data-edge]')
    expect(await hops.locator('td:first-child').allTextContents()).toEqual([root, child])
    expect(await hops.first().locator('[data-col="outcome"]').textContent()).toBe('adopt')
    expect(await hops.first().locator('[data-col="before"]').textContent()).toBe('none recorded')
    expect(await hops.first().locator('[data-col="after"]').textContent()).toMatch(/^[a-z_.]+(, [a-z_.]+)+$/)
    // Nothing written by the preview.
    expect((await records(`projectId=${projectId}`)).total).toBe(0)
    await screenshot(page, 'web-adoption-preview')

    await preview.getByRole('button', {name: 'Commit adopt'}).click()
    await expect.poll(() => plan().locator('#committed').textContent()).toBe('Committed: 2 edge(s) written, 0 record(s) covered.')
    await expect.poll(() => view().locator('#page-info').textContent()).toBe('1–2 of 2')
    expect(await view().locator('tr[data-record] [data-col="status"]').allTextContents()).toEqual(['adopted', 'adopted'])
    const api = await records(`projectId=${projectId}`)
    expect(api.records.map((r: {status: string}) => r.status)).toEqual(['adopted', 'adopted'])
    // The counts follow the commit (every adopted record here is one of these two).
    const all = await records('')
    expect(await view().locator('table[aria-label="Records by status"] [data-count="adopted"]').textContent()).toBe(String(all.counts.byStatus.adopted))
    await screenshot(page, 'web-adoption-committed')
  })

  it('reverts a record through the same preview-then-commit flow', async () => {
    const record = (await records(`projectId=${projectId}`)).records.find((r: {delegateAgentId: string}) => r.delegateAgentId === child)
    await view().getByRole('button', {name: `Revert record ${record.id}`}).click()
    expect(await plan().getByLabel('Record IDs').inputValue()).toBe(record.id)
    await plan().getByRole('button', {name: 'Preview'}).click()
    const preview = plan().locator('#preview')
    await expect.poll(() => preview.getByRole('status').textContent()).toMatch(/^Preview of revert: /)
    expect(await preview.locator('tr[data-edge] td:first-child').allTextContents()).toEqual([child])
    expect((await records(`projectId=${projectId}`)).records.find((r: {id: string}) => r.id === record.id).status).toBe('adopted')
    await preview.getByRole('button', {name: 'Commit revert'}).click()
    await plan().locator('#committed').waitFor()
    await expect.poll(async () => (await records(`projectId=${projectId}`)).records.find((r: {id: string}) => r.id === record.id).status).not.toBe('adopted')
    await expect.poll(() => view().locator(`tr[data-record="${record.id}"] [data-col="status"]`).textContent()).not.toBe('adopted')
  })

  it('filters records by status and pages through them', async () => {
    const many = await newProject(hub, 'web-adopt-many')
    await legacyAgents(hub, Array.from({length: 23}, () => ({projectId: many, by: 'dev-user'})))
    const {commitBody} = await previewFor(hub, {operation: 'adopt', scope: {projectId: many}})
    expect((await hub.request('POST', `${ADOPTION}/commits`, {body: commitBody})).status).toBe(200)

    await page.goto(`${base}/#/adoption`)
    await view().getByLabel('Filter by project ID').fill(many)
    await view().getByLabel('Filter by project ID').press('Enter')
    await expect.poll(() => view().locator('#page-info').textContent()).toBe('1–20 of 23')
    await view().getByRole('button', {name: 'Next page'}).click()
    await expect.poll(() => view().locator('#page-info').textContent()).toBe('21–23 of 23')
    expect(await view().locator('tr[data-record]').count()).toBe(3)
    await view().getByRole('button', {name: 'Previous page'}).click()
    await expect.poll(() => view().locator('#page-info').textContent()).toBe('1–20 of 23')

    await view().getByLabel('Filter by project ID').fill('')
    await view().getByLabel('Filter by project ID').press('Enter')
    await view().getByLabel('Filter by status').selectOption('adopted')
    const adopted = (await records('status=adopted')).total
    await expect.poll(() => view().locator('#page-info').textContent()).toBe(`1–20 of ${adopted}`)
    expect(new Set(await view().locator('tr[data-record] [data-col="status"]').allTextContents())).toEqual(new Set(['adopted']))
    await screenshot(page, 'web-adoption-paging')
  })

  it('a preview of many hops shows the first 100 rows and grows on request; the counts cover all', async () => {
    const wide = await newProject(hub, 'web-adopt-wide')
    await legacyAgents(hub, Array.from({length: 105}, () => ({projectId: wide, by: 'dev-user'})))
    await page.goto(`${base}/#/adoption`)
    // The earlier tests left the form on revert.
    await plan().getByLabel('Operation').selectOption('adopt')
    await plan().getByLabel('Project ID').fill(wide)
    await plan().getByRole('button', {name: 'Preview'}).click()
    const preview = plan().locator('#preview')
    await expect.poll(() => preview.getByRole('status').textContent()).toMatch(/^Preview of adopt: 105 adopt\./)
    expect(await preview.locator('tr[data-edge]').count()).toBe(100)
    expect(await preview.locator('[data-shown]').textContent()).toBe('Showing 100 of 105 hops.')
    await preview.getByRole('button', {name: 'Show 5 more'}).click()
    await expect.poll(() => preview.locator('tr[data-edge]').count()).toBe(105)
    expect(await preview.locator('[data-shown]').count()).toBe(0)
    await screenshot(page, 'web-adoption-many-hops')
  })
})
