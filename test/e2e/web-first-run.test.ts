import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import type {Browser, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {requestJson} from '../../src/client/http.js'
import {runCli, startLocalRuntimeServer, type RunningServer} from '../helpers/cli.js'
import {makeRepos, sh, write, type TestRepos} from '../helpers/git-repos.js'
import {tmuxAt} from '../helpers/live-hub.js'
import {launchChromium, screenshot, SCREENSHOTS, signInPage, unlabelledControls} from '../helpers/web-browser.js'

const POLL = {timeout: 30_000}

/**
 * Issue 30, items 11 and 7 in the web, against a real `svc server start` and headless Chromium: a
 * new user's first page says what to do (register a project from a checkout, create an agent,
 * land its work) instead of empty lists; the admin tabs sit behind an Admin menu; the Changes
 * tab merges with a merge commit by default, as the CLI does; Delete can take the merged branch.
 */
describe('the web: first run, the Admin menu, and landing then deleting with the branch', {timeout: 240_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-first-run-'))
  const tmuxDir = mkdtempSync(join(tmpdir(), 'svc-e2e-first-run-tmux-'))
  let server: RunningServer
  let env: NodeJS.ProcessEnv
  let devToken: string
  let browser: Browser
  let page: Page
  let repos: TestRepos
  const api = async (method: string, path: string, body?: unknown): Promise<any> => (await requestJson(method, `${server.url}${path}`, {token: devToken, ...(body !== undefined && {body})})).body
  const steps = () => page.locator('#get-started')

  beforeAll(async () => {
    ;({server, env} = await startLocalRuntimeServer(home, tmuxDir))
    devToken = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    browser = await launchChromium()
    page = await (await browser.newContext({viewport: {width: 1100, height: 800}})).newPage()
    repos = makeRepos()
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    tmuxAt(tmuxDir, ['kill-server'])
    repos?.dispose()
    for (const d of [home, tmuxDir]) rmSync(d, {recursive: true, force: true})
  })

  it('a new user lands on what to do first, not on empty lists; the admin tabs are behind the Admin menu', async () => {
    await signInPage(page, server.url, devToken)
    await expect.poll(() => steps().count(), POLL).toBe(1)
    expect(await page.getByRole('heading', {name: 'Get started'}).count()).toBe(1)
    const register = steps().locator('li[data-step="register"]')
    expect(await register.textContent()).toContain('svc project register')
    expect(await register.getAttribute('data-done')).toBe('false')
    expect(await steps().locator('li[data-step="create"]').textContent()).toContain('svc agent create alice')
    expect(await steps().locator('li[data-step="land"]').textContent()).toContain('svc agent merge alice')
    // Beside Projects, Agents and Approvals only the Admin menu; its items show once it is opened.
    const nav = page.getByRole('navigation', {name: 'Hub sections'})
    const settings = nav.getByRole('link', {name: 'Settings'})
    expect(await nav.locator('> ul > li > a').allTextContents()).toEqual(['Projects', 'Agents', 'Approvals'])
    expect(await settings.isVisible()).toBe(false)
    expect(await unlabelledControls(page)).toEqual([])
    await screenshot(page, 'web-first-run')

    await nav.locator('summary', {hasText: 'Admin'}).click()
    await expect.poll(() => settings.isVisible(), POLL).toBe(true)
    expect(await nav.getByRole('list', {name: 'Admin'}).getByRole('link').allTextContents()).toEqual(['Settings', 'Maintenance', 'Profiling', 'Templates', 'Delegation adoption'])
    await screenshot(page, 'web-admin-menu-open')
    await settings.click()
    await expect.poll(() => page.locator('svc-settings-section[data-section="quotas"]').count(), POLL).toBe(1)
    // The menu closes on the way, and says which admin page is open.
    expect(await settings.isVisible()).toBe(false)
    expect(await nav.locator('summary').textContent()).toBe('Admin: Settings')
    // The viewport only: the settings page is long.
    await page.screenshot({path: join(SCREENSHOTS, 'web-admin-menu-settings.png')})
  })

  it('once the checkout is registered the step says so; once there is an agent the page is the projects', async () => {
    const reg = await runCli(['project', 'register', 'demo', '--no-remote', '--json'], {env, cwd: repos.checkout, timeoutMs: 60_000})
    expect(reg.code, reg.stdout + reg.stderr).toBe(0)
    await page.goto(`${server.url}/#/`)
    await page.reload()
    const register = steps().locator('li[data-step="register"]')
    await expect.poll(() => register.getAttribute('data-done'), POLL).toBe('true')
    expect(await register.textContent()).toContain(`demo is linked to ${repos.checkout}`)
    await screenshot(page, 'web-first-run-registered')

    const {agent} = await api('POST', '/api/v1/agents', {name: 'alice', projectId: reg.json.project.id, harnessConfig: 'shell', task: 'Write the notes'})
    expect(agent.workspace.branch).toBe('svc/alice')
    await page.reload()
    await expect.poll(() => page.locator('svc-projects table').count(), POLL).toBe(1)
    expect(await steps().count()).toBe(0)
  })

  it('the Changes tab merges with a merge commit by default (as svc agent merge); Delete with "its branch" removes the merged branch and says so', async () => {
    const {agents} = await api('GET', '/api/v1/agents')
    const alice = agents.find((a: {name: string}) => a.name === 'alice')
    write(alice.workspace.path, 'docs/notes.md', 'notes by alice\n')
    await page.goto(`${server.url}/#/agents/${alice.id}`)
    await page.getByRole('tab', {name: 'Changes'}).click()
    await expect.poll(() => page.locator('svc-agent-changes button[data-path]').count(), POLL).toBe(1)
    expect(await page.getByLabel('Merge strategy').inputValue()).toBe('merge')
    await page.getByRole('button', {name: 'Merge', exact: true}).click()
    await expect.poll(() => page.locator('#land-outcome').textContent(), POLL).toMatch(/Merged svc\/alice into main: commit [0-9a-f]{12}/)
    expect(sh(repos.checkout, 'log', '-1', '--format=%P|%an <%ae>', 'main').split('|')[0]!.split(' ')).toHaveLength(2)
    expect(sh(repos.checkout, 'log', '-1', '--format=%an <%ae>', 'main')).toBe('Dev <dev@example.com>')
    expect(sh(repos.checkout, 'log', '-1', '--format=%s', 'svc/alice')).toBe('Write the notes')

    await page.locator('#agent-delete').click()
    await page.getByLabel('Also delete its branch svc/alice if merged').check()
    await screenshot(page, 'web-delete-with-branch')
    await page.locator('#agent-delete-confirm').click()
    await expect.poll(() => page.locator('#flash').textContent(), POLL).toBe('Deleted agent alice. Deleted its branch svc/alice (merged).')
    expect(new URL(page.url()).hash).toMatch(/^#\/agents\?project=/)
    expect(sh(repos.checkout, 'branch', '--list', 'svc/alice')).toBe('')
    await screenshot(page, 'web-deleted-with-branch')
  })
})
