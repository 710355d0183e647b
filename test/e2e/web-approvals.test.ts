import {execFileSync} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import type {Browser, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startClaudeHub, type ClaudeHub} from '../helpers/claude-hub.js'
import {waitFor} from '../helpers/live-hub.js'
import {userText} from '../helpers/model-servers/anthropic.js'
import {launchChromium, screenshot, signInPage, unlabelledControls} from '../helpers/web-browser.js'

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
  let hub: ClaudeHub
  let agent: {id: string; workspace: {path: string}}
  let browser: Browser
  let page: Page
  const svc = (args: string[]) => hub.svc(args)
  const pendingOf = async () => (await hub.api(`/api/v1/agents/${agent.id}/approvals?state=pending`)).approvals as any[]
  const idleAfter = (turns: number) =>
    waitFor(async () => {
      const a = (await hub.api(`/api/v1/agents/${agent.id}`)).agent
      return a.activity === 'idle' && a.turns >= turns ? a : undefined
    }, 120_000, `idle after turn ${turns}`)
  const card = (p: Page) => p.locator('svc-approval-card')

  beforeAll(async () => {
    hub = await startClaudeHub('web-approvals')
    browser = await launchChromium()
    page = await (await browser.newContext({viewport: {width: 1280, height: 900}})).newPage()
    await signInPage(page, hub.server.url, hub.token)
  })
  afterAll(async () => {
    await browser?.close()
    await hub?.stop()
  })

  it('the agent page shows the request live; Allow runs the command', async () => {
    hub.model.enqueue({tool: {name: 'Bash', input: {command: 'echo one > one.txt', description: 'write one.txt'}}}, {text: 'Wrote one.txt.'})
    const r = await svc(['agent', 'create', 'fix', '--harness', 'claude', 'write one into one.txt', '--json'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    agent = r.json.agent
    // Opened before the request exists: it must arrive through the event stream.
    await page.goto(`${hub.server.url}/#/agents/${agent.id}`)
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
    const [decided] = (await hub.api(`/api/v1/agents/${agent.id}/approvals`)).approvals
    expect(decided).toMatchObject({state: 'allowed', decidedBy: {kind: 'user'}})
  })

  it('the inbox on a phone-sized screen lists the new request live; Deny with a reason refuses it and the model reads the reason', async () => {
    const phone = await (await browser.newContext({viewport: {width: 390, height: 844}, isMobile: true, hasTouch: true})).newPage()
    await signInPage(phone, hub.server.url, hub.token)
    await phone.goto(`${hub.server.url}/#/approvals`)
    await expect.poll(() => phone.locator('#approvals-empty').count(), POLL).toBe(1)

    hub.model.enqueue({tool: {name: 'Bash', input: {command: 'echo two > two.txt', description: 'write two.txt'}}}, {text: 'Not writing two.txt.'})
    const before = hub.model.mainRequests().length
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
    await hub.model.waitForRequest((q) => q.main && hub.model.mainRequests().indexOf(q) > before && userText(q.body).includes('not on a Friday'), 90_000, 'the deny reason as the tool result')
    await idleAfter(2)
    expect(existsSync(join(agent.workspace.path, 'two.txt'))).toBe(false)
    expect((await pendingOf()).length).toBe(0)
    await phone.close()
  })

  it('a request decided elsewhere leaves the inbox and the agent page without a reload', async () => {
    await page.goto(`${hub.server.url}/#/approvals`)
    hub.model.enqueue({tool: {name: 'Bash', input: {command: 'echo three > three.txt', description: 'write three.txt'}}}, {text: 'Wrote three.txt.'})
    expect((await svc(['message', 'fix', 'now write three into three.txt'])).code).toBe(0)
    await expect.poll(() => card(page).count(), POLL).toBe(1)
    await screenshot(page, 'web-approvals-inbox')
    const ok = await svc(['agent', 'approve', 'fix', '--json'])
    expect(ok.code, ok.stderr + ok.stdout).toBe(0)
    await expect.poll(() => card(page).count(), POLL).toBe(0)
    await idleAfter(3)
  })

  /**
   * Issue 29's done-when with Claude Code, on this file's Hub (no second Hub start): a small Node
   * project whose committed `.svc/setup` runs `npm ci` (offline: its one dependency is a
   * directory of the checkout) and whose `.svc/settings.yaml` lists the ignored `.env` in
   * `workspace.copy`. A new Claude Code agent's first `npm test` passes (the tool result the
   * model reads says so), it starts the dev server on $PORT in the background, and this signed-in
   * Chromium sees the server's page at `<hub>/agents/<id>/ports/<PORT>/`.
   */
  describe('environments: a new Claude Code agent on a Node project with a setup and a copied .env', () => {
    let app: {id: string; workspace: {path: string}}
    const approve = async (summary: string) => {
      const asked = await waitFor(async () => (await hub.api(`/api/v1/agents/${app.id}/approvals?state=pending`)).approvals[0], FIRST.timeout, `the approval of ${summary}`)
      expect(asked.summary).toBe(summary)
      const ok = await svc(['agent', 'approve', 'app', '--json'])
      expect(ok.code, ok.stderr + ok.stdout).toBe(0)
    }

    beforeAll(async () => {
      const c = hub.checkout
      const put = (rel: string, text: string) => (mkdirSync(join(c, rel, '..'), {recursive: true}), writeFileSync(join(c, rel), text))
      put('.gitignore', '*.log\nnode_modules/\n.env\n')
      put('lib/package.json', JSON.stringify({name: 'greeting', version: '1.0.0', main: 'index.js'}))
      put('lib/index.js', 'module.exports = (who) => `hello ${who}`\n')
      put('package.json', JSON.stringify({name: 'app', version: '1.0.0', private: true, scripts: {test: 'node test.js', dev: 'node server.js'}, dependencies: {greeting: 'file:./lib'}}))
      // Passes only with the copied .env and the node_modules npm ci made (require fails without).
      const readEnv = "require('fs').readFileSync('.env', 'utf8').split('\\n').forEach((l) => { const [k, v] = l.split('='); if (k) process.env[k] = v })\n"
      put('test.js', `${readEnv}const out = require('greeting')(process.env.WHO)\nif (out !== 'hello from-dotenv') { console.error('FAIL', out); process.exit(1) }\nconsole.log('TESTS-PASSED', out)\n`)
      put('server.js', `${readEnv}const greet = require('greeting')\nrequire('http').createServer((req, res) => res.writeHead(200, {'content-type': 'text/html'}).end('<!doctype html><title>app</title><h1>' + greet(process.env.WHO) + ' on port ' + process.env.PORT + '</h1>')).listen(Number(process.env.PORT))\n`)
      put('.svc/setup', '#!/bin/sh\nset -e\nnpm ci --offline --no-audit --no-fund\n')
      chmodSync(join(c, '.svc/setup'), 0o755)
      execFileSync('npm', ['install', '--package-lock-only', '--offline', '--no-audit', '--no-fund'], {cwd: c, stdio: 'ignore'})
      hub.git('add', '-A')
      hub.git('commit', '-q', '-m', 'node project')
      put('.env', 'WHO=from-dotenv\n')
      // Added to the project's settings file (`svc project register` wrote its hub.grove_id there).
      writeFileSync(join(c, '.svc/settings.yaml'), `${readFileSync(join(c, '.svc/settings.yaml'), 'utf8')}\nworkspace:\n  copy: [".env"]\n`)
      const on = await fetch(`${hub.server.url}/api/v1/admin/server-config`, {method: 'PUT', headers: {authorization: `Bearer ${hub.token}`, 'content-type': 'application/json'}, body: JSON.stringify({auto_expose_ports: {enabled: true}})})
      expect(on.status, await on.text()).toBe(200)
    })

    it("the first npm test passes and the dev server opens through <hub>/agents/<id>/ports/<PORT>/ in the signed-in browser", async () => {
      hub.model.enqueue(
        {tool: {name: 'Bash', input: {command: 'npm test', description: 'run the tests'}}},
        {tool: {name: 'Bash', input: {command: 'nohup node server.js > server.log 2>&1 &', description: 'start the dev server'}}},
        {text: 'Tests pass; the dev server is running.'},
      )
      const before = hub.model.mainRequests().length
      const r = await svc(['agent', 'create', 'app', '--harness', 'claude', 'run the tests, then start the dev server', '--json'])
      expect(r.code, r.stderr + r.stdout).toBe(0)
      app = r.json.agent
      // Phase running: the setup (npm ci) ran before Claude Code started, and .env was copied.
      expect(r.json.agent.phase, JSON.stringify(r.json.agent)).toBe('running')
      app = (await hub.api(`/api/v1/agents/${app.id}`)).agent
      expect(existsSync(join(app.workspace.path, 'node_modules', 'greeting'))).toBe(true)
      expect(readFileSync(join(app.workspace.path, '.env'), 'utf8')).toBe('WHO=from-dotenv\n')

      await approve('npm test')
      const tested = await hub.model.waitForRequest((q) => q.main && hub.model.mainRequests().indexOf(q) >= before + 1 && userText(q.body).includes('TESTS-PASSED'), FIRST.timeout, 'the npm test result')
      expect(userText(tested.body)).toContain('TESTS-PASSED hello from-dotenv')
      await approve('nohup node server.js > server.log 2>&1 &')

      const ports = await waitFor(async () => {
        const listed = (await hub.api(`/api/v1/agents/${app.id}/ports`)).ports
        return listed.length > 0 ? listed : undefined
      }, 90_000, 'the dev server listening')
      const port = ports[0].port as number
      expect(ports).toEqual([{port, url: `${hub.server.url}/agents/${app.id}/ports/${port}/`}])
      const preview = await (await browser.newContext()).newPage()
      await signInPage(preview, hub.server.url, hub.token)
      await preview.goto(ports[0].url)
      await preview.locator('h1', {hasText: `hello from-dotenv on port ${port}`}).waitFor({timeout: POLL.timeout})
      expect(preview.url()).toMatch(new RegExp(`/agents/${app.id}/ports/${port}/~[\\w-]+\\.[\\w-]+/$`))
      await screenshot(preview, 'environment-claude-preview')
      await preview.close()
    })
  })
})
