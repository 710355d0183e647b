import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import type {Browser, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {requestJson} from '../../src/client/http.js'
import {runCli, startLocalRuntimeServer, type RunningServer} from '../helpers/cli.js'
import {agentProcessEnv, tmuxAt} from '../helpers/live-hub.js'
import {launchChromium, screenshot, unlabelledControls} from '../helpers/web-browser.js'

/**
 * The done-when of the web pages, against a real `svc server start` (what `npm start` runs): a
 * workstation user signs the browser in with the link `svc web` prints (nothing is signed in for
 * coming from loopback), changes a Layer-1 setting and sees it saved; then follows an agent live, types in its terminal and
 * reads its logs.
 */
describe('the web client of a workstation Hub started with svc server start', {timeout: 180_000}, () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-web-'))
  const tmuxDir = mkdtempSync(join(tmpdir(), 'svc-e2e-web-tmux-'))
  let server: RunningServer
  let env: NodeJS.ProcessEnv
  let devToken: string
  let browser: Browser
  let page: Page
  const api = async (method: string, path: string, body?: unknown): Promise<any> => (await requestJson(method, `${server.url}${path}`, {token: devToken, ...(body !== undefined && {body})})).body

  beforeAll(async () => {
    ;({server, serverEnv: env} = await startLocalRuntimeServer(home, tmuxDir))
    devToken = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    browser = await launchChromium()
    page = await (await browser.newContext()).newPage()
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    tmuxAt(tmuxDir, ['kill-server'])
    for (const d of [home, tmuxDir]) rmSync(d, {recursive: true, force: true})
  })

  it('the Hub\'s address alone signs nobody in; the link `svc web` prints and opens signs in as the dev user; a Layer-1 setting changed on the Settings tab is saved', async () => {
    await page.goto(`${server.url}/`)
    await expect.poll(() => page.locator('#svc-web-command').textContent()).toBe(`svc web --hub ${server.url}`)
    expect(await page.locator('#signed-in-as').count()).toBe(0)
    await screenshot(page, 'web-workstation-signed-out')
    const cli = {...env, SVC_HUB_ENDPOINT: server.url, CI: ''}
    // --json and --no-open print the link and open nothing.
    const json = await runCli(['web', '--json'], {env: {...cli, SVC_BROWSER: `printf %s > ${join(home, 'opened-json')}`}, timeoutMs: 60_000})
    expect(json.code, json.stderr).toBe(0)
    expect(json.json).toEqual({url: expect.stringMatching(new RegExp(`^${server.url}/auth/web\\?token=`)), expiresAt: expect.any(String)})
    const inCi = await runCli(['web'], {env: {...cli, CI: 'true', SVC_BROWSER: `printf %s > ${join(home, 'opened-ci')}`}, timeoutMs: 60_000})
    expect(inCi.code, inCi.stderr).toBe(0)
    expect(inCi.stdout).toMatch(/^Open this link in your browser within \d+ s \(it works once\):\n  http/)
    expect(inCi.stdout).not.toContain('Opened')
    // Without them (and with a browser command at hand, not in CI) the CLI opens the link itself.
    const opened = join(home, 'opened-url')
    const run = await runCli(['web', '/#/projects'], {env: {...cli, SVC_BROWSER: `printf %s > ${opened}`}, timeoutMs: 60_000})
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('Opened it in your browser.')
    await expect.poll(() => (existsSync(opened) ? readFileSync(opened, 'utf8') : ''), {timeout: 20_000}).toMatch(/\/auth\/web\?token=/)
    const url = readFileSync(opened, 'utf8')
    expect(run.stdout).toContain(url)
    for (const f of ['opened-json', 'opened-ci']) expect(existsSync(join(home, f)), f).toBe(false)
    await page.goto(url)
    await expect.poll(() => page.locator('#signed-in-as').textContent()).toBe('Signed in as Developer (system admin)')
    expect(new URL(page.url()).hash).toBe('#/projects')
    // The link was spent: opened again (another browser), it signs nobody in.
    const other = await (await browser.newContext()).newPage()
    expect((await other.goto(url))?.status()).toBe(401)
    await other.context().close()
    // Settings is an item of the Admin menu.
    await page.locator('#admin-menu summary').click()
    await page.getByRole('link', {name: 'Settings'}).click()
    const quota = page.locator('svc-settings-section[data-section="quotas"] svc-field[data-key="quotas.max_agents_per_project"] input')
    await quota.fill('12')
    await page.getByRole('button', {name: 'Save quotas'}).click()
    await expect.poll(() => page.locator('svc-settings-section[data-section="quotas"] [data-role="message"]').textContent()).toContain('Saved (revision 2)')
    await screenshot(page, 'web-workstation-saved')
    await page.reload()
    await expect.poll(() => quota.inputValue()).toBe('12')
    expect(await page.locator('svc-settings-section[data-section="quotas"] [data-meta="origin"]').textContent()).toBe('managed')
    expect((await api('GET', '/api/v1/admin/server-config')).quotas.max_agents_per_project).toBe(12)
  })

  it('lists agents with phase and activity updating live; the agent page has its terminal and its logs', async () => {
    const project = (await api('GET', '/api/v1/projects')).projects[0]
    const {agent} = await api('POST', '/api/v1/agents', {name: 'webdemo', projectId: project.id, harnessConfig: 'shell'})
    expect(agent.phase).toBe('running')
    await page.goto(`${server.url}/#/projects`)
    await page.getByRole('link', {name: `Agents of ${project.name}`}).click()
    const row = page.locator(`svc-agents tr[data-agent="${agent.id}"]`)
    await expect.poll(() => row.locator('[data-col="phase"]').textContent()).toBe('running')

    // The agent reports an activity with its own credential; the open list follows without a reload.
    const own = agentProcessEnv(tmuxDir, agent.id)
    const status = await runCli(['status', 'thinking', '--detail', 'from the web test', '--json'], {env: {...env, SVC_AUTH_TOKEN: own.SVC_AUTH_TOKEN, SVC_AGENT_ID: own.SVC_AGENT_ID, SVC_HUB_ENDPOINT: own.SVC_HUB_ENDPOINT}, timeoutMs: 60_000})
    expect(status.code, status.stderr).toBe(0)
    await expect.poll(() => row.locator('[data-col="activity"]').textContent(), {timeout: 20_000}).toBe('thinking')
    await screenshot(page, 'web-agents-live')

    await row.getByRole('link', {name: 'webdemo'}).click()
    await page.getByRole('button', {name: 'Attach to the terminal'}).click()
    const terminal = page.locator('svc-terminal#attach')
    await expect.poll(() => terminal.locator('[data-role="state"]').textContent()).toBe('Terminal: connected')
    await terminal.getByLabel('Send a line').fill('echo web-typed-$((6*7))')
    await terminal.getByLabel('Send a line').press('Enter')
    // The terminals are xterm.js emulators: their buffers hold the screen text.
    const screenText = (el: Element) => (el as unknown as {screenText(): string}).screenText()
    await expect.poll(() => terminal.evaluate(screenText), {timeout: 20_000}).toContain('web-typed-42')
    await expect.poll(() => page.locator('svc-terminal#logs').evaluate(screenText), {timeout: 20_000}).toContain('web-typed-42')
    expect(await unlabelledControls(page)).toEqual([])
    await screenshot(page, 'web-agent-terminal')

    await api('POST', `/api/v1/agents/${agent.id}/stop`, {})
    await expect.poll(() => page.locator('#agent-phase').textContent(), {timeout: 20_000}).toBe('stopped')
    await expect.poll(() => page.locator('pre[aria-label="Logs"]').textContent(), {timeout: 20_000}).toContain('web-typed-42')
  })
})
