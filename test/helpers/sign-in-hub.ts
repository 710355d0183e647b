import {createHash, randomBytes} from 'node:crypto'
import type {Clock} from '../../src/domain/shared/clock.js'
import {freePort} from './cli.js'
import {startTestHub, type Dialect, type TestHub} from './hub.js'
import {startOidcProvider, type TestAccount, type TestProvider} from './oidc-provider.js'
import {TestBrowser, type BrowseOptions, type Page} from './test-browser.js'

export interface SignInHub {
  hub: TestHub
  provider: TestProvider
  /** The Hub's public URL; the Hub listens there. */
  url: string
  /** A fresh browser (own cookie jar). */
  browser(opts?: BrowseOptions): TestBrowser
  /** Plays a whole web sign-in; returns the session cookie value and the browser. */
  signIn(login: string, opts?: {returnTo?: string}): Promise<{token: string | undefined; browser: TestBrowser; last: Page}>
  dispose(): Promise<void>
}

/** A clock the test can move forward. */
export function movableClock(): Clock & {advance(ms: number): void} {
  let offset = 0
  return {now: () => new Date(Date.now() + offset), advance: (ms) => void (offset += ms)}
}

/** What a sign-in Hub is started with: its extra env, clock, the provider's accounts, and OIDC off. */
export type SignInHubOptions = {env?: Record<string, string>; clock?: Clock; accounts?: Record<string, TestAccount>; oidc?: boolean}

/**
 * A real Hub (SQLite or a fresh PostgreSQL schema) listening on a loopback port, configured
 * against a real OpenID provider whose client redirects to that Hub.
 */
export async function startSignInHub(
  dialect: Dialect,
  opts: SignInHubOptions = {},
): Promise<SignInHub> {
  // The Hub's URL is part of its configuration, so its port is chosen before it listens; another
  // process may take that port meanwhile (a loaded suite: EADDRINUSE), and then a new one is chosen.
  for (let attempt = 1; ; attempt++) {
    const started = await startOn(dialect, opts, await freePort())
    if (started) return started
    if (attempt === 5) throw new Error('no free loopback port for the sign-in Hub after 5 tries')
  }
}

async function startOn(dialect: Dialect, opts: SignInHubOptions, port: number): Promise<SignInHub | null> {
  const url = `http://127.0.0.1:${port}`
  const provider = await startOidcProvider({redirectUris: [`${url}/api/v1/auth/callback`], accounts: opts.accounts})
  const oidcEnv = opts.oidc === false ? {} : provider.hubEnv()
  const hub = await startTestHub(dialect, {env: {SVC_SERVER_HUB_PUBLICURL: url, ...oidcEnv, ...opts.env}, clock: opts.clock})
  try {
    await hub.app.listen({host: '127.0.0.1', port})
  } catch (err) {
    await hub.dispose()
    await provider.close()
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') return null
    throw err
  }
  const isHubPage = (u: URL) => u.origin === url && !u.pathname.startsWith('/api/')
  return {
    hub,
    provider,
    url,
    browser: (o) => new TestBrowser(o),
    async signIn(login, o = {}) {
      const browser = new TestBrowser({login})
      const q = o.returnTo ? `?return_to=${encodeURIComponent(o.returnTo)}` : ''
      // Stop at the Hub page the sign-in lands on: the Hub serves no pages in these tests.
      const last = await browser.open(`${url}/api/v1/auth/login${q}`, {stopAt: isHubPage})
      return {token: browser.cookie('127.0.0.1', 'svc_session'), browser, last}
    },
    async dispose() {
      await hub.dispose()
      await provider.close()
    },
  }
}

/** A PKCE pair as the CLI makes it. */
export function pkcePair(): {verifier: string; challenge: string} {
  const verifier = randomBytes(32).toString('base64url')
  return {verifier, challenge: createHash('sha256').update(verifier).digest('base64url')}
}
