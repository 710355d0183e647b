import {LitElement, html} from 'lit'
import {api} from '../api.js'
import {returnTo} from '../router.js'
import {shared} from '../styles.js'

/** The Hub the CLI uses when nothing else is configured (`svc --hub` default). */
const DEFAULT_HUB = 'http://127.0.0.1:9810'

/** `word` quoted for a POSIX shell when it holds anything but plain path characters. */
const shellWord = (word: string) => (/^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

/**
 * The `svc web` command that opens this page signed in: the page the browser was sent from
 * (`return_to`) or the current view, and `--hub` when this Hub is not the CLI's default.
 */
export function svcWebCommand(): string {
  const page = returnTo() ?? (location.hash && location.hash !== '#' && location.hash !== '#/' ? `/${location.hash}` : '')
  const hub = location.origin === DEFAULT_HUB ? '' : ` --hub ${shellWord(location.origin)}`
  return `svc web${page ? ` ${shellWord(page)}` : ''}${hub}`
}

/**
 * Shown when the browser has no session. Nothing signs a browser in for coming from this host
 * (an agent shares it): `svc web` prints a one-time sign-in link, and a hosted Hub with OpenID
 * Connect also offers its identity provider.
 */
export class SvcSignIn extends LitElement {
  static properties = {oidc: {state: true}, loaded: {state: true}}
  static styles = shared
  declare oidc: boolean
  declare loaded: boolean

  constructor() {
    super()
    this.oidc = false
    this.loaded = false
  }

  override async connectedCallback() {
    super.connectedCallback()
    try {
      const r = await api<{oidc: {configured?: boolean} | null}>('GET', '/api/v1/auth/providers')
      this.oidc = !!r.oidc && r.oidc.configured !== false
    } catch {
      this.oidc = false
    }
    this.loaded = true
  }

  override render() {
    const back = encodeURIComponent(returnTo() ?? `/${location.hash}`)
    const cli = html`<p id="svc-web-hint">${this.oidc ? 'Or run' : 'Run'} this in a terminal where the <code>svc</code> CLI is signed in to this Hub; it prints (and, where it can, opens) a one-time sign-in link for this browser:</p>
      <pre><code id="svc-web-command">${svcWebCommand()}</code></pre>`
    return html`<main class="narrow">
      <h2>Sign in to the svc Hub</h2>
      ${!this.loaded
        ? html`<p class="muted" role="status">Loading…</p>`
        : this.oidc
          ? html`<p><a id="sign-in" href="/api/v1/auth/login?return_to=${back}">Sign in with your identity provider</a></p>${cli}`
          : cli}
    </main>`
  }
}
customElements.define('svc-sign-in', SvcSignIn)
