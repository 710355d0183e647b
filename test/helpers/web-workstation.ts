import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import type {Browser, Page} from 'playwright-core'
import {requestJson} from '../../src/client/http.js'
import {startLocalRuntimeServer, type RunningServer} from './cli.js'
import {tmuxAt} from './live-hub.js'
import {launchChromium, signInPage} from './web-browser.js'

export interface WebWorkstation {
  server: RunningServer
  devToken: string
  browser: Browser
  /** Signs the page's browser context in as the dev user with a one-time link (`svc web`), landing on `path`. */
  signIn(page: Page, path?: string): Promise<void>
  /** The dev user's API call: the answer's body (an error answer throws the client's AppError). */
  api(method: string, path: string, body?: unknown): Promise<any>
  /** Closes the browser, stops the Hub and its tmux server, removes the temp directories. */
  stop(): Promise<void>
}

/** A real `svc server start` with a local runtime (shell agents in tmux) and headless Chromium. */
export async function startWebWorkstation(prefix: string): Promise<WebWorkstation> {
  const home = mkdtempSync(join(tmpdir(), `${prefix}-`))
  const tmuxDir = mkdtempSync(join(tmpdir(), `${prefix}-tmux-`))
  const {server} = await startLocalRuntimeServer(home, tmuxDir)
  const devToken = readFileSync(join(home, '.svc', 'dev-token'), 'utf8').trim()
  const browser = await launchChromium()
  return {
    server,
    devToken,
    browser,
    signIn: (page, path) => signInPage(page, server.url, devToken, path),
    api: async (method, path, body) => (await requestJson(method, `${server.url}${path}`, {token: devToken, ...(body !== undefined && {body})})).body,
    async stop() {
      await browser.close()
      await server.stop()
      tmuxAt(tmuxDir, ['kill-server'])
      for (const d of [home, tmuxDir]) rmSync(d, {recursive: true, force: true})
    },
  }
}
