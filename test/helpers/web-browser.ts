import {mkdirSync} from 'node:fs'
import {join} from 'node:path'
import {chromium, type Browser, type Page} from 'playwright-core'
import {requestJson} from '../../src/client/http.js'

/** Screenshots of the browser tests: test output, not committed. */
export const SCREENSHOTS = join(process.cwd(), 'test-output', 'screenshots')

/** Debian's headless Chromium, driven by playwright-core. */
export async function launchChromium(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, {recursive: true})
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  })
}

export const screenshot = (page: Page, name: string) => page.screenshot({path: join(SCREENSHOTS, `${name}.png`), fullPage: true})

/**
 * Form controls of the page (shadow roots included) that have no accessible name: no label
 * tied to them, no aria-label, and (buttons) no text. The web client must label every control.
 */
export function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = []
    const visit = (root: Document | ShadowRoot) => {
      for (const el of root.querySelectorAll('*')) {
        if (el.shadowRoot) visit(el.shadowRoot)
        if (!/^(INPUT|SELECT|TEXTAREA|BUTTON)$/.test(el.tagName)) continue
        const c = el as HTMLInputElement
        const named = !!c.getAttribute('aria-label') || (c.labels?.length ?? 0) > 0 || (el.tagName === 'BUTTON' && !!el.textContent?.trim())
        if (!named) out.push(el.outerHTML.slice(0, 120))
      }
    }
    visit(document)
    return out
  })
}

/**
 * Signs the page's browser context in as `svc web` does: asks the Hub for a one-time link with
 * `token` (the dev credential or a session) and opens it, landing on `path` (default `/`).
 * Nothing signs a browser in for coming from loopback.
 */
export async function signInPage(page: Page, hubUrl: string, token: string, path = '/'): Promise<void> {
  const base = hubUrl.replace(/\/+$/, '')
  const link = (await requestJson<{path: string}>('POST', `${base}/api/v1/auth/web-sign-in`, {token, body: {path}})).body
  await page.goto(`${base}${link.path}`)
}
