import type {Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {rawRequest, sha256} from '../helpers/artifacts.js'
import {screenshot, unlabelledControls} from '../helpers/web-browser.js'
import {startWebWorkstation, type WebWorkstation} from '../helpers/web-workstation.js'

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i
const POLL = {timeout: 30_000}

/**
 * The web pages a new user meets, on a real `svc server start` with real agents (shell harness
 * in tmux): projects by name, the project column of all agents, Stop / Start / Delete on the
 * agent page, a project's artifacts with their versions and downloads, "not found" views and
 * the Hub's HTML 404, and the Hub's name in the header.
 */
describe('web: names, agent actions, artifacts, not found, hub name', {timeout: 240_000}, () => {
  let hub: WebWorkstation
  let server: WebWorkstation['server']
  let devToken: string
  let page: Page
  let project: {id: string; name: string}
  let other: {id: string; name: string}
  const api = (method: string, path: string, body?: unknown) => hub.api(method, path, body)
  const text = (selector: string) => page.locator(selector).first().textContent()

  beforeAll(async () => {
    hub = await startWebWorkstation('svc-e2e-webpages')
    ;({server, devToken} = hub)
    project = (await api('GET', '/api/v1/projects')).projects[0]
    other = (await api('POST', '/api/v1/projects/register', {name: 'Second Project'})).project
    page = await hub.browser.newPage()
    await hub.signIn(page)
  }, 120_000)
  afterAll(() => hub?.stop())

  it('names projects in headings and adds a Project column to the list of every agent', async () => {
    const a = (await api('POST', '/api/v1/agents', {name: 'worker', projectId: project.id, harnessConfig: 'shell'})).agent
    const b = (await api('POST', '/api/v1/agents', {name: 'helper', projectId: other.id, harnessConfig: 'shell'})).agent
    await page.goto(`${server.url}/#/agents`)
    const rowA = page.locator(`svc-agents tr[data-agent="${a.id}"]`)
    await expect.poll(() => rowA.locator('[data-col="project"]').textContent(), POLL).toBe(project.name)
    expect(await page.locator(`svc-agents tr[data-agent="${b.id}"] [data-col="project"]`).textContent()).toBe('Second Project')
    expect(await page.locator('svc-agents th').allTextContents()).toContain('Project')

    // The project's link opens its own list, headed by its name (no ID), without the column.
    await rowA.locator('[data-col="project"]').getByRole('link').click()
    await expect.poll(() => text('svc-agents h2'), POLL).toBe(`Agents of project ${project.name}`)
    expect(await text('svc-agents h2')).not.toMatch(UUID)
    expect(await page.locator('svc-agents th').allTextContents()).not.toContain('Project')
    await expect.poll(() => page.locator('svc-agents tr[data-agent]').count(), POLL).toBe(1)

    await page.locator(`svc-agents tr[data-agent="${a.id}"]`).getByRole('link', {name: 'worker'}).click()
    await expect.poll(() => text('svc-agent h2'), POLL).toContain(`in project ${project.name}`)
    expect(await text('svc-agent h2')).not.toMatch(UUID)
    expect(await page.getByRole('link', {name: `← Agents of ${project.name}`}).count()).toBe(1)
    await screenshot(page, 'web-pages-agent-named')
  })

  it('Stop and Start act through the Hub and follow the phase; Delete asks in the page, then removes the agent', async () => {
    const {agents} = await api('GET', '/api/v1/agents')
    const worker = agents.find((x: {name: string}) => x.name === 'worker')
    await expect.poll(() => text('svc-agent #agent-phase'), POLL).toBe('running')
    await page.getByRole('button', {name: 'Stop'}).click()
    await expect.poll(async () => (await api('GET', `/api/v1/agents/${worker.id}`)).agent.phase, POLL).toBe('stopped')
    await expect.poll(() => text('svc-agent #agent-phase'), POLL).toBe('stopped')
    await expect.poll(() => page.getByRole('button', {name: 'Start'}).count(), POLL).toBe(1)
    expect(await page.getByRole('button', {name: 'Stop'}).count()).toBe(0)

    await page.getByRole('button', {name: 'Start'}).click()
    await expect.poll(async () => (await api('GET', `/api/v1/agents/${worker.id}`)).agent.phase, POLL).toBe('running')
    await expect.poll(() => page.getByRole('button', {name: 'Stop'}).count(), POLL).toBe(1)

    // A refusal shows the envelope's message inline (the Hub's answer stood in for once).
    await page.route(`**/api/v1/agents/${worker.id}`, (route) =>
      route.request().method() === 'DELETE'
        ? route.fulfill({status: 403, contentType: 'application/json', body: JSON.stringify({error: {code: 'forbidden', message: 'not allowed: agent.delete in project p', requestId: 'r'}})})
        : route.continue(),
    )
    await page.getByRole('button', {name: 'Delete…'}).click()
    expect(await text('svc-agent-controls #delete-question')).toContain('Delete agent worker?')
    await page.getByRole('button', {name: 'Delete worker'}).click()
    await expect.poll(() => text('svc-agent-controls #agent-action-error'), POLL).toContain('not allowed: agent.delete in project p')
    await page.unroute(`**/api/v1/agents/${worker.id}`)
    expect((await api('GET', `/api/v1/agents/${worker.id}`)).agent.id).toBe(worker.id)
    expect(await unlabelledControls(page)).toEqual([])

    // Cancel keeps it; confirming deletes it through the Hub and goes back to the project's list.
    await page.getByRole('button', {name: 'Delete…'}).click()
    await page.getByRole('button', {name: 'Cancel'}).click()
    expect(await page.locator('svc-agent-controls #delete-question').count()).toBe(0)
    await page.getByRole('button', {name: 'Delete…'}).click()
    await screenshot(page, 'web-pages-agent-delete-confirm')
    await page.getByRole('button', {name: 'Delete worker'}).click()
    const gone = () => api('GET', `/api/v1/agents/${worker.id}`).then(() => 'still there', (err: {code?: string}) => err.code)
    await expect.poll(gone, POLL).toBe('not_found')
    await expect.poll(() => page.evaluate(() => location.hash), POLL).toBe(`#/agents?project=${encodeURIComponent(project.id)}`)
    await expect.poll(() => page.locator(`svc-agents tr[data-agent="${worker.id}"]`).count(), POLL).toBe(0)
  })

  it("lists a project's artifacts with every version, and each download link serves that version's bytes", async () => {
    const publish = async (path: string, body: Buffer) => {
      const r = await rawRequest('POST', `${server.url}${path}`, {token: devToken, body, headers: {'x-content-sha256': sha256(body)}})
      expect(r.status, r.body.toString()).toBe(201)
      return r.json
    }
    const v1 = Buffer.from('first draft\n')
    const v2 = Buffer.from([0, 1, 2, 250, 251, 252, 10])
    const first = await publish(`/api/v1/artifacts?name=report.bin&title=Weekly%20report&scope=${project.id}`, v1)
    await publish(`/api/v1/artifacts/${first.artifact.id}/versions?name=report.bin`, v2)

    await page.goto(`${server.url}/#/projects`)
    await page.getByRole('link', {name: `Artifacts of ${project.name}`}).click()
    await expect.poll(() => text('svc-artifacts h2'), POLL).toBe(`Artifacts of project ${project.name}`)
    const row = page.locator(`svc-artifacts tr[data-artifact="${first.artifact.id}"]`)
    expect(await row.getByRole('link', {name: 'Weekly report', exact: true}).getAttribute('href')).toBe(`/projects/${project.id}/artifacts/${first.artifact.id}`)
    expect(await row.locator('li[data-version]').evaluateAll((els) => els.map((e) => e.getAttribute('data-version')))).toEqual(['2', '1'])
    expect(await row.locator('li[data-version="2"]').textContent()).toContain('(current)')
    for (const [seq, bytes] of [[1, v1], [2, v2]] as const) {
      const link = row.getByRole('link', {name: `Download report.bin, version ${seq} of Weekly report`})
      const href = (await link.getAttribute('href'))!
      const got = await page.evaluate(async (h) => Array.from(new Uint8Array(await (await fetch(h)).arrayBuffer())), href)
      expect(Buffer.from(got).equals(bytes)).toBe(true)
    }
    expect(await unlabelledControls(page)).toEqual([])
    await screenshot(page, 'web-pages-artifacts')
  })

  it('unknown routes, agents and projects show "not found" with a link home; unknown server paths get the HTML 404', async () => {
    for (const [hash, says] of [
      ['#/no-such-page', 'no page "no-such-page"'],
      ['#/agents/no-such-agent', 'no agent "no-such-agent"'],
      ['#/agents?project=no-such-project', 'no project "no-such-project"'],
      ['#/projects/no-such-project/artifacts', 'no project "no-such-project"'],
      ['#/projects/x/y/z', 'no page "projects/x/y/z"'],
    ]) {
      await page.goto(`${server.url}/${hash}`)
      const box = page.locator('#not-found')
      await expect.poll(() => box.count(), POLL).toBe(1)
      expect(await box.getByRole('heading').textContent()).toBe('Not found')
      expect(await box.textContent()).toContain(says)
      expect(await box.getByRole('link', {name: 'Go to the home page'}).getAttribute('href')).toBe('#/')
    }
    await page.locator('#not-found').getByRole('link').click()
    await expect.poll(() => page.locator('svc-projects table').count(), POLL).toBe(1)

    const res = await page.goto(`${server.url}/no/such/page`)
    expect(res!.status()).toBe(404)
    expect(res!.headers()['content-type']).toMatch(/^text\/html/)
    expect(await page.getByRole('heading', {name: 'Page not found'}).count()).toBe(1)
    await screenshot(page, 'web-pages-server-404')
    await page.getByRole('link', {name: "Go to the Hub's home page"}).click()
    await expect.poll(() => page.locator('svc-projects table').count(), POLL).toBe(1)
    // API paths keep the JSON envelope.
    const apiRes = await page.goto(`${server.url}/api/v1/no-such-route`)
    expect(apiRes!.status()).toBe(404)
    expect((await apiRes!.json()).error.code).toBe('not_found')
  })

  it('shows server.hub.hub_name in the header once an admin saved it', async () => {
    await page.goto(`${server.url}/#/projects`)
    await expect.poll(() => page.locator('svc-app header').count(), POLL).toBe(1)
    expect(await page.locator('#hub-name').count()).toBe(0)
    // Settings is an item of the Admin menu.
    await page.locator('#admin-menu summary').click()
    await page.getByRole('link', {name: 'Settings'}).click()
    const section = page.locator('svc-settings-section[data-section="hub"]')
    await expect.poll(() => section.count(), POLL).toBe(1)
    await section.locator('svc-field[data-key="server.hub.hub_name"] input').fill('Team Hub')
    await section.getByRole('button', {name: 'Save hub'}).click()
    await expect.poll(() => page.locator('#hub-name').textContent(), POLL).toBe('Team Hub')
    expect((await api('GET', '/api/v1/admin/server-config')).server.hub.hub_name).toBe('Team Hub')
    await page.reload()
    await expect.poll(() => page.locator('#hub-name').textContent(), POLL).toBe('Team Hub')
    expect(await page.title()).toBe('Team Hub - svc Hub')
    await screenshot(page, 'web-pages-hub-name')
  })
})
