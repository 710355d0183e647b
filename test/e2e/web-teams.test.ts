import type {Browser, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {makeRepos, sh, write, type TestRepos} from '../helpers/git-repos.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'
import {launchChromium, screenshot, signInPage, unlabelledControls} from '../helpers/web-browser.js'

/**
 * Teams in Debian Chromium against a listening Hub with real shell agents: the agent page shows its
 * parent and its children (new children and their state changes arrive live), the project page
 * shows the agents as a tree, and the attempts' group view shows the attempts side by side with
 * check and diff, where Pick (after a confirmation) lands the passing attempt on the checkout's
 * branch and deletes the other.
 */
describe('web: teams (parent and children, tree, attempts side by side with Pick)', {timeout: 180_000}, () => {
  let hub: LiveHub
  let repos: TestRepos
  let browser: Browser
  let page: Page
  let projectId: string
  const ids: Record<string, string> = {}

  async function create(body: Record<string, unknown>) {
    const r = await hub.request('POST', '/api/v1/agents', {body: {projectId, harnessConfig: 'shell', ...body}})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    for (const a of r.body.agents ?? [r.body.agent]) ids[a.name] = a.id
    return r.body
  }

  beforeAll(async () => {
    hub = await startLiveHub('sqlite')
    repos = makeRepos()
    const project = (await hub.request('GET', '/api/v1/projects/default')).body.project
    projectId = project.id
    await hub.store.projects.update(project.id, {localPath: repos.checkout}, iso(new Date()))
    await create({name: 'lead'})
    await create({name: 'helper', parentId: ids.lead})
    browser = await launchChromium()
    page = await (await browser.newContext({viewport: {width: 1280, height: 900}})).newPage()
    await signInPage(page, hub.url, hub.devToken)
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await hub?.dispose()
    repos?.dispose()
  })

  it("the agent page links its parent and lists its children with their state, live", async () => {
    await page.goto(`${hub.url}/#/agents/${ids.helper}`)
    const parent = page.locator('svc-agent-team #agent-parent a')
    await expect.poll(() => parent.textContent(), {timeout: 20_000}).toBe('lead')
    await parent.click()
    await expect.poll(() => page.locator('#agent-project').isVisible(), {timeout: 20_000}).toBe(true)
    const children = page.getByRole('table', {name: 'Children'})
    await expect.poll(() => children.locator('tbody tr').count(), {timeout: 20_000}).toBe(1)
    expect(await children.locator(`tr[data-child="${ids.helper}"] a`).getAttribute('href')).toBe(`#/agents/${ids.helper}`)
    // A new child appears, and a child's stop shows, without a reload.
    await create({name: 'helper2', parentId: ids.lead})
    await expect.poll(() => children.locator('tbody tr').count(), {timeout: 30_000}).toBe(2)
    expect((await hub.request('POST', `/api/v1/agents/${ids.helper}/stop`, {body: {}})).status).toBe(200)
    await expect.poll(() => children.locator(`tr[data-child="${ids.helper}"] [data-col="state"]`).textContent(), {timeout: 30_000}).toBe('stopped')
    await screenshot(page, 'web-teams-agent-children')
    expect(await unlabelledControls(page)).toEqual([])
  })

  it('the project page shows its agents as a tree (List / Tree)', async () => {
    await page.goto(`${hub.url}/#/agents?project=${projectId}`)
    await page.getByRole('button', {name: 'Tree'}).click()
    const tree = page.getByRole('list', {name: 'Agents as a tree'})
    await expect.poll(() => tree.locator(`li[data-agent="${ids.lead}"] li[data-agent]`).count(), {timeout: 20_000}).toBe(2)
    expect(await tree.locator(':scope > li').count()).toBe(1)
    expect(await tree.locator(`li[data-agent="${ids.lead}"] li[data-agent="${ids.helper2}"] [data-col="state"]`).textContent()).toMatch(/^(idle|running|working|thinking|executing)$/)
    await screenshot(page, 'web-teams-tree')
    await page.getByRole('button', {name: 'List'}).click()
    await expect.poll(() => page.getByRole('table', {name: 'Agents'}).locator('tbody tr').count()).toBe(3)
  })

  it('the attempts side by side with check and diff; Pick asks, then lands the passing attempt and deletes the other', async () => {
    // The check outlasts the view's first read: its result carries no agent event, and must show anyway.
    await create({name: 'fix', attempts: 2, check: 'sleep 3; test -f ok.txt', task: 'make ok.txt'})
    const fix2 = (await hub.request('GET', `/api/v1/agents/${ids['fix-2']}`)).body.agent
    write(fix2.workspace.path, 'ok.txt', 'done\n')
    sh(fix2.workspace.path, 'add', 'ok.txt')
    sh(fix2.workspace.path, '-c', 'user.name=a', '-c', 'user.email=a@example.com', 'commit', '-qm', 'ok')
    for (const name of ['fix-1', 'fix-2']) {
      const token = (await hub.services.agentTokens.mint((await hub.store.agents.get(ids[name]))!)).token
      expect((await hub.request('POST', `/api/v1/agents/${ids[name]}/status`, {token, body: {activity: 'idle'}})).status).toBe(200)
    }
    // From an attempt's page to its group's view.
    await page.goto(`${hub.url}/#/agents/${ids['fix-1']}`)
    await page.locator('svc-agent-team #agent-group a').click()
    const column = (name: string) => page.locator(`svc-attempts section[data-attempt="${name}"]`)
    await expect.poll(() => column('fix-2').locator('[data-col="check"]').textContent(), {timeout: 20_000}).toBe('running')
    await expect.poll(() => column('fix-2').locator('[data-col="check"]').textContent(), {timeout: 60_000}).toBe('passed (exit 0)')
    await expect.poll(() => column('fix-1').locator('[data-col="check"]').textContent(), {timeout: 60_000}).toBe('failed (exit 1)')
    expect(await column('fix-2').locator('[data-col="diffstat"]').textContent()).toBe('1 file, +1 -0')
    expect(await column('fix-1').locator('[data-col="diffstat"]').textContent()).toBe('0 files, +0 -0')
    expect(await column('fix-2').getByRole('table', {name: 'Changes to ok.txt'}).locator('tr.add').allTextContents()).toEqual(['1+done'])
    await screenshot(page, 'web-teams-attempts')
    expect(await unlabelledControls(page)).toEqual([])

    // Declining the confirmation changes nothing; accepting it picks.
    const before = repos.fingerprint()
    page.once('dialog', (d) => void d.dismiss())
    await column('fix-2').getByRole('button', {name: 'Pick fix-2'}).click()
    await expect.poll(() => (hub.request('GET', `/api/v1/agents?group=fix`)).then((r) => r.body.agents.length)).toBe(2)
    expect(repos.fingerprint()).toBe(before)
    let asked = ''
    page.once('dialog', (d) => {
      asked = d.message()
      void d.accept()
    })
    await column('fix-2').getByRole('button', {name: 'Pick fix-2'}).click()
    await expect.poll(() => page.locator('svc-attempts #pick-outcome').textContent(), {timeout: 60_000}).toMatch(/^Picked fix-2: merged svc\/fix-2 into main \([0-9a-f]{12}\)\. Deleted fix-1; their branches are kept\.$/)
    expect(asked).toBe('Pick fix-2? Its work is merged into main, and fix-1 are stopped and deleted (their branches are kept).')
    expect(sh(repos.checkout, 'show', 'main:ok.txt')).toBe('done')
    expect(sh(repos.checkout, 'branch', '--list', 'svc/fix-1')).toContain('svc/fix-1')
    await waitFor(async () => (await column('fix-1').count()) === 0, 30_000, 'fix-1 gone from the view')
    await screenshot(page, 'web-teams-picked')
  })

  it('POST .../pick of an agent that is not an attempt answers 409 and changes nothing', async () => {
    const before = repos.fingerprint()
    const r = await hub.request('POST', `/api/v1/agents/${ids.helper2}/pick`, {body: {}})
    expect(r.status).toBe(409)
    expect(r.body.error).toMatchObject({code: 'conflict', message: 'agent helper2 is not an attempt (it was not created with --attempts)'})
    expect((await hub.request('GET', `/api/v1/agents/${ids.helper2}`)).status).toBe(200)
    expect(repos.fingerprint()).toBe(before)
  })
})
