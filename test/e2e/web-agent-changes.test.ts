import type {Browser, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {iso} from '../../src/domain/shared/clock.js'
import {makeRepos, sh, write, type TestRepos} from '../helpers/git-repos.js'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'
import {launchChromium, screenshot, signInPage, unlabelledControls} from '../helpers/web-browser.js'

/**
 * The agent page's Changes tab in Debian Chromium, against a listening Hub whose co-located broker
 * holds real worktrees: the diff appears and follows the agent's new work, both layouts render,
 * Merge lands the work, and a conflicting agent's Merge shows the refusal inline, naming the file.
 */
describe('web: an agent\'s Changes tab (diff, merge, push)', {timeout: 180_000}, () => {
  let hub: LiveHub
  let repos: TestRepos
  let browser: Browser
  let page: Page
  const ids: Record<string, string> = {}
  const paths: Record<string, string> = {}

  /** An agent made through the API: dispatch makes its worktree of the project's checkout. */
  async function agent(name: string) {
    const project = (await hub.request('GET', '/api/v1/projects/default')).body.project
    await hub.store.projects.update(project.id, {localPath: repos.checkout}, iso(new Date()))
    const r = await hub.request('POST', '/api/v1/agents', {body: {name, projectId: project.id, harnessConfig: 'shell'}})
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    const ws = r.body.agent.workspace
    expect(ws).toMatchObject({branch: `svc/${name}`, baseRef: 'main'})
    ids[name] = r.body.agent.id
    paths[name] = ws.path
  }

  beforeAll(async () => {
    hub = await startLiveHub('sqlite')
    repos = makeRepos()
    await agent('alice')
    await agent('bob')
    write(paths.alice, 'src/app.ts', 'export const a = 1\n// the agent changed b\nexport const b = "two"\nexport const c = 3\n')
    sh(paths.alice, 'commit', '-qam', 'b is a string')
    write(paths.alice, 'README.md', '# demo\nby alice\n')
    write(paths.bob, 'src/app.ts', 'export const a = 100\nexport const b = 2\nexport const c = 3\n')
    browser = await launchChromium()
    page = await (await browser.newContext({viewport: {width: 1280, height: 900}})).newPage()
    await signInPage(page, hub.url, hub.devToken)
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await hub?.dispose()
    repos?.dispose()
  })

  const outcome = () => page.locator('svc-agent-changes #land-outcome')

  it('the Changes tab lists the files with counts and shows their diff, unified and side by side, following new work', async () => {
    await page.goto(`${hub.url}/#/agents/${ids.alice}`)
    await page.getByRole('tab', {name: 'Changes'}).click()
    const files = page.getByRole('navigation', {name: 'Changed files'})
    await expect.poll(() => files.locator('button[data-path]').count(), {timeout: 20_000}).toBe(2)
    expect(await files.locator('button[data-path="src/app.ts"]').textContent()).toMatch(/M\s*src\/app\.ts\s*\+2\s*-1/)
    const diff = page.getByRole('table', {name: 'Changes to src/app.ts'})
    expect(await diff.locator('tr.add').allTextContents()).toEqual(['2+// the agent changed b', '3+export const b = "two"'])
    expect(await diff.locator('tr.add .tok-str').first().textContent()).toBe('"two"')
    expect(await diff.locator('tr.add .tok-com').first().textContent()).toBe('// the agent changed b')
    await screenshot(page, 'web-agent-changes-unified')

    await page.getByLabel('Side by side').check()
    await files.locator('button[data-path="src/app.ts"]').click()
    const split = page.getByRole('table', {name: 'Changes to src/app.ts, side by side'})
    expect(await split.locator('td.code.del').allTextContents()).toEqual(['export const b = 2'])
    expect(await split.locator('td.code.add').allTextContents()).toEqual(['// the agent changed b', 'export const b = "two"'])
    await screenshot(page, 'web-agent-changes-split')

    // The agent keeps working: a new file appears without a reload.
    write(paths.alice, 'src/added.ts', 'export const added = true\n')
    await expect.poll(() => files.locator('button[data-path]').count(), {timeout: 30_000}).toBe(3)
    expect(await unlabelledControls(page)).toEqual([])
  })

  it('Merge lands the work; a conflicting agent\'s Merge shows merge_conflict inline, naming the file, and changes nothing', async () => {
    await page.getByLabel('Merge strategy').selectOption('squash')
    await page.getByLabel('Commit message').fill('Land alice from the web')
    await page.getByRole('button', {name: 'Merge', exact: true}).click()
    await expect.poll(() => outcome().textContent(), {timeout: 30_000}).toMatch(/Squashed svc\/alice into main: commit [0-9a-f]{12} \(3 files\)/)
    expect(sh(repos.checkout, 'log', '-1', '--format=%s|%an')).toBe('Land alice from the web|alice')
    expect(sh(repos.checkout, 'show', 'HEAD:src/added.ts')).toBe('export const added = true')

    const before = repos.fingerprint()
    await page.goto(`${hub.url}/#/agents/${ids.bob}`)
    await page.getByRole('tab', {name: 'Changes'}).click()
    await expect.poll(() => page.locator('svc-agent-changes button[data-path]').count(), {timeout: 20_000}).toBe(1)
    // Another agent's tab starts over: no message or outcome carried from alice's.
    expect(await page.getByLabel('Commit message').inputValue()).toBe('')
    expect(await outcome().count()).toBe(0)
    await page.getByRole('button', {name: 'Merge', exact: true}).click()
    await expect.poll(() => outcome().getAttribute('data-code'), {timeout: 30_000}).toBe('merge_conflict')
    expect(await outcome().locator('li').allTextContents()).toEqual(['src/app.ts'])
    expect(await outcome().getAttribute('role')).toBe('alert')
    expect(repos.fingerprint()).toBe(before)
    await screenshot(page, 'web-agent-changes-conflict')

    await page.getByRole('button', {name: 'Push'}).click()
    await expect.poll(() => outcome().textContent(), {timeout: 30_000}).toContain(`Pushed svc/bob to origin: ${repos.remote}`)
    expect(sh(repos.remote, 'rev-parse', 'svc/bob')).toBe(sh(repos.checkout, 'rev-parse', 'svc/bob'))
  })
})
