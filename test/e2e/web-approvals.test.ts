import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import type {Browser, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliEnv, freePort, runCli, startServerProcess, type RunningServer} from '../helpers/cli.js'
import {tmuxAt, waitFor} from '../helpers/live-hub.js'
import {startAnthropicServer, userText, type AnthropicServer} from '../helpers/model-servers/anthropic.js'
import {launchChromium, screenshot, signInPage, unlabelledControls} from '../helpers/web-browser.js'

const BIN_DIR = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url))
const KEY = 'sk-ant-e2e-key-for-the-scripted-server-0123456789'
const POLL = {timeout: 90_000, interval: 250}
// A loaded machine can take minutes before Claude Code's first model request (nice 10, a cold start).
const FIRST = {timeout: 300_000, interval: 250}

/**
 * Issue 28's web half in Debian Chromium, against a real `svc server start` whose co-located
 * broker runs the real `claude` CLI (scripted model): Claude Code asks to run Bash; the request
 * shows on the agent page and in the approvals inbox, live; Allow on the agent page runs the
 * command, Deny with a reason in the inbox (a phone-sized screen) refuses it and the model reads
 * the reason. Nothing is typed into the agent's terminal.
 */
describe('web: approvals on the agent page and in the inbox', {timeout: 600_000}, () => {
  const root = mkdtempSync(join(tmpdir(), 'svc-e2e-web-approvals-'))
  const home = join(root, 'home')
  const tmuxDir = join(root, 'tmux')
  const checkout = join(root, 'checkout')
  let model: AnthropicServer
  let server: RunningServer
  let env: NodeJS.ProcessEnv
  let token: string
  let agent: {id: string; workspace: {path: string}}
  let browser: Browser
  let page: Page
  const tmux = (...args: string[]) => tmuxAt(tmuxDir, args)
  const svc = (args: string[]) => runCli(args, {env, cwd: checkout, timeoutMs: 90_000})
  const git = (...args: string[]) => execFileSync('git', args, {cwd: checkout, encoding: 'utf8', env: {...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com'}})
  const api = async (path: string) => {
    const res = await fetch(`${server.url}${path}`, {headers: {authorization: `Bearer ${token}`}})
    if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`)
    return res.json()
  }
  const pendingOf = async () => (await api(`/api/v1/agents/${agent.id}/approvals?state=pending`)).approvals as any[]
  const idleAfter = (turns: number) =>
    waitFor(async () => {
      const a = (await api(`/api/v1/agents/${agent.id}`)).agent
      return a.activity === 'idle' && a.turns >= turns ? a : undefined
    }, 120_000, `idle after turn ${turns}`)
  const card = (p: Page) => p.locator('svc-approval-card')

  beforeAll(async () => {
    for (const d of [home, tmuxDir, checkout, join(home, '.svc')]) mkdirSync(d, {recursive: true})
    model = await startAnthropicServer()
    writeFileSync(
      join(home, '.svc', 'settings.yaml'),
      `schema_version: "1"\nharness_configs:\n  claude:\n    harness: claude\n    env:\n      ANTHROPIC_BASE_URL: ${model.url}\n      ANTHROPIC_API_KEY: ${KEY}\n`,
    )
    git('init', '-q', '-b', 'main')
    writeFileSync(join(checkout, 'README.md'), '# demo\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'init')
    const serverEnv = cliEnv(home, {
      PATH: `${BIN_DIR}:${process.env.PATH}`,
      TMUX_TMPDIR: tmuxDir,
      SVC_SERVER_BROKER_PORT: String(await freePort()),
      DOCKER_HOST: 'unix:///nonexistent/docker.sock',
      CONTAINER_HOST: 'unix:///nonexistent/podman.sock',
    })
    server = await startServerProcess([], serverEnv, 60_000)
    env = {...serverEnv, SVC_HUB_ENDPOINT: server.url}
    token = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
    const reg = await svc(['project', 'register', '--json'])
    expect(reg.code, reg.stderr + reg.stdout).toBe(0)
    browser = await launchChromium()
    page = await (await browser.newContext({viewport: {width: 1280, height: 900}})).newPage()
    await signInPage(page, server.url, token)
  })
  afterAll(async () => {
    await browser?.close()
    const pids = tmux('list-panes', '-a', '-F', '#{pane_pid}').stdout.split('\n').filter(Boolean)
    await server?.stop()
    tmux('kill-server')
    await waitFor(() => pids.every((pid) => !existsSync(`/proc/${pid}`)), 15_000, 'the harness processes to exit').catch(() => {})
    await model?.close()
    rmSync(root, {recursive: true, force: true, maxRetries: 10, retryDelay: 200})
  })

  it('the agent page shows the request live; Allow runs the command', async () => {
    model.enqueue({tool: {name: 'Bash', input: {command: 'echo one > one.txt', description: 'write one.txt'}}}, {text: 'Wrote one.txt.'})
    const r = await svc(['agent', 'create', 'fix', '--harness', 'claude', 'write one into one.txt', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    agent = r.json.agent
    // Opened before the request exists: it must arrive through the event stream.
    await page.goto(`${server.url}/#/agents/${agent.id}`)
    await expect.poll(() => card(page).count(), FIRST).toBe(1)
    expect(await card(page).locator('[data-role=summary]').textContent()).toBe('echo one > one.txt')
    await expect.poll(() => page.locator('#needs-you').textContent(), POLL).toContain('Permission: Bash')
    expect(await unlabelledControls(page)).toEqual([])
    await screenshot(page, 'web-approval-agent-page')

    await card(page).getByRole('button', {name: 'Allow'}).click()
    await expect.poll(() => page.locator('#approval-outcome').textContent(), POLL).toContain('allowed')
    expect(await card(page).count()).toBe(0)
    await idleAfter(1)
    expect(readFileSync(join(agent.workspace.path, 'one.txt'), 'utf8')).toBe('one\n')
    const [decided] = (await api(`/api/v1/agents/${agent.id}/approvals`)).approvals
    expect(decided).toMatchObject({state: 'allowed', decidedBy: {kind: 'user'}})
  })

  it('the inbox on a phone-sized screen lists the new request live; Deny with a reason refuses it and the model reads the reason', async () => {
    const phone = await (await browser.newContext({viewport: {width: 390, height: 844}, isMobile: true, hasTouch: true})).newPage()
    await signInPage(phone, server.url, token)
    await phone.goto(`${server.url}/#/approvals`)
    await expect.poll(() => phone.locator('#approvals-empty').count(), POLL).toBe(1)

    model.enqueue({tool: {name: 'Bash', input: {command: 'echo two > two.txt', description: 'write two.txt'}}}, {text: 'Not writing two.txt.'})
    const before = model.mainRequests().length
    expect((await svc(['message', 'fix', 'now write two into two.txt'])).code).toBe(0)
    await expect.poll(() => card(phone).count(), POLL).toBe(1)
    expect(await card(phone).locator('[data-role=summary]').textContent()).toBe('echo two > two.txt')
    expect(await card(phone).getByRole('link', {name: 'fix'}).count()).toBe(1)
    // Nothing sticks out of a phone's screen.
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    expect(await unlabelledControls(phone)).toEqual([])
    await screenshot(phone, 'web-approvals-inbox-phone')

    await card(phone).getByRole('button', {name: 'Deny…'}).click()
    await card(phone).getByLabel('Reason for the model').fill('not on a Friday')
    await card(phone).getByRole('button', {name: 'Deny', exact: true}).click()
    await expect.poll(() => phone.locator('#approvals-decided').textContent(), POLL).toContain('denied')
    await expect.poll(() => phone.locator('#approvals-empty').count(), POLL).toBe(1)
    await model.waitForRequest((q) => q.main && model.mainRequests().indexOf(q) > before && userText(q.body).includes('not on a Friday'), 90_000, 'the deny reason as the tool result')
    await idleAfter(2)
    expect(existsSync(join(agent.workspace.path, 'two.txt'))).toBe(false)
    expect((await pendingOf()).length).toBe(0)
    await phone.close()
  })

  it('a request decided elsewhere leaves the inbox and the agent page without a reload', async () => {
    await page.goto(`${server.url}/#/approvals`)
    model.enqueue({tool: {name: 'Bash', input: {command: 'echo three > three.txt', description: 'write three.txt'}}}, {text: 'Wrote three.txt.'})
    expect((await svc(['message', 'fix', 'now write three into three.txt'])).code).toBe(0)
    await expect.poll(() => card(page).count(), POLL).toBe(1)
    await screenshot(page, 'web-approvals-inbox')
    const ok = await svc(['agent', 'approve', 'fix', '--json'])
    expect(ok.code, ok.stderr + ok.stdout).toBe(0)
    await expect.poll(() => card(page).count(), POLL).toBe(0)
    await idleAfter(3)
  })
})
