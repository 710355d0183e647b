import {LitElement, html} from 'lit'
import {api} from '../api.js'
import {returnTo} from '../router.js'
import {shared} from '../styles.js'

/** Shown when the browser has no session: OpenID Connect sign-in on hosted Hubs. */
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
    return html`<main class="narrow">
      <h2>Sign in to the svc Hub</h2>
      ${!this.loaded
        ? html`<p class="muted" role="status">Loading…</p>`
        : this.oidc
          ? html`<p><a id="sign-in" href="/api/v1/auth/login?return_to=${back}">Sign in with your identity provider</a></p>`
          : html`<p class="notice error" role="alert">This Hub has no sign-in configured for browsers. A workstation Hub signs its own browser in at http://127.0.0.1; a hosted Hub needs <code>server.auth.oidc</code>.</p>`}
    </main>`
  }
}
customElements.define('svc-sign-in', SvcSignIn)
