/**
 * Stands in for a browser when the CLI opens a URL (`SVC_BROWSER`): plays the sign-in with
 * TestBrowser as account `SVC_TEST_BROWSER_LOGIN` (default alice), declining with
 * `SVC_TEST_BROWSER_DENY=1`, and appends one JSON line per run to `SVC_TEST_BROWSER_LOG`.
 */
import {appendFileSync} from 'node:fs'
import {TestBrowser} from './test-browser.js'

const url = process.argv[2]
const log = (entry: object) => process.env.SVC_TEST_BROWSER_LOG && appendFileSync(process.env.SVC_TEST_BROWSER_LOG, JSON.stringify(entry) + '\n')
const browser = new TestBrowser({login: process.env.SVC_TEST_BROWSER_LOGIN || 'alice', deny: process.env.SVC_TEST_BROWSER_DENY === '1'})
try {
  const page = await browser.open(url)
  log({url, status: page.status, final: page.url.toString(), body: page.body.slice(0, 300)})
} catch (err) {
  log({url, error: (err as Error).message, history: browser.history})
  process.exitCode = 1
}
