import {LitElement, html, css} from 'lit'
import {keyed} from 'lit/directives/keyed.js'
import {api, ApiError} from '../api.js'
import {notificationsSupported, startDesktopAlerts} from '../desktop-alerts.js'
import {markReady, resetReadiness} from '../readiness.js'
import {currentRoute, returnTo, type Route} from '../router.js'
import {shared} from '../styles.js'
import './svc-sign-in.js'
import './svc-settings.js'
import './svc-maintenance.js'
import './svc-profiling.js'
import './svc-projects.js'
import './svc-agents.js'
import './svc-attempts.js'
import './svc-agent.js'
import './svc-approvals.js'
import './svc-templates.js'
import './svc-adoption.js'
import './svc-artifacts.js'
import './svc-home.js'
import {takeFlash} from '../flash.js'
import {notFoundView} from './not-found.js'

export interface AdminStatus {
  principal: {kind: string; id: string}
  credentialKind: string
  systemAdmin: boolean
  mode: string
  /** `server.hub.hub_name`; '' until an admin saves one. */
  hubName?: string
  maintenance: {enabled: boolean; break_glass: boolean}
  permissions: string[]
}

interface Tab {
  route: string
  label: string
  /** The permission that shows the tab and opens its route; null: any signed-in user. */
  permission: string | null
}

/**
 * Every tab, gated per item by the permissions of GET /api/v1/admin/status. Those with a
 * permission are the admin ones: they sit behind the Admin menu, not beside Projects and Agents.
 */
export const TABS: Tab[] = [
  {route: 'projects', label: 'Projects', permission: null},
  {route: 'agents', label: 'Agents', permission: null},
  {route: 'approvals', label: 'Approvals', permission: null},
  {route: 'settings', label: 'Settings', permission: 'admin.server_config.read'},
  {route: 'maintenance', label: 'Maintenance', permission: 'admin.maintenance.read'},
  {route: 'profiling', label: 'Profiling', permission: 'admin.profiling.read'},
  {route: 'templates', label: 'Templates', permission: 'admin.templates.manage'},
  {route: 'adoption', label: 'Delegation adoption', permission: 'admin.delegation_adoption'},
]

/**
 * The app shell: signs in (or shows how), then the tabs the caller may use and the current view.
 * `#/` is the home page (svc-home.ts: what to do first, then the projects). The admin tabs the
 * caller may use are items of the Admin menu; a user with none sees no menu.
 */
export class SvcApp extends LitElement {
  static properties = {status: {state: true}, who: {state: true}, route: {state: true}, failure: {state: true}, signedOut: {state: true}, adminOpen: {state: true}, flashText: {state: true}}
  static styles = [
    shared,
    css`
      header { display: flex; align-items: center; gap: 1rem; padding: .5rem 1rem; background: #16324f; color: #fff; }
      header .mode { color: #c9d6e3; }
      header .hub-name { font-weight: 600; padding-left: .75rem; border-left: 1px solid #4a6785; }
      header .sign-out { font-size: 12px; padding: .1rem .5rem; }
      header .who { margin-left: auto; font-size: 12px; }
      header a.home { color: #fff; text-decoration: none; font-weight: 700; }
      nav li.admin { position: relative; margin-left: auto; }
      nav summary { list-style: none; cursor: pointer; padding: .35rem .8rem; border: 1px solid transparent; border-bottom: none; border-radius: 4px 4px 0 0; }
      nav summary::-webkit-details-marker { display: none; }
      nav summary::after { content: ' ▾'; font-size: 10px; }
      nav summary.current { border-color: #c9d1da; background: #fff; margin-bottom: -1px; font-weight: 600; }
      nav .menu { position: absolute; right: 0; z-index: 10; display: block; min-width: 12rem; margin: 0; padding: .25rem 0; list-style: none; background: #fff; border: 1px solid #c9d1da; border-radius: 4px; box-shadow: 0 4px 12px rgb(0 0 0 / 12%); }
      nav .menu a { border: none; border-radius: 0; padding: .35rem .9rem; }
      nav .menu a:hover, nav .menu a[aria-current='page'] { background: #eef4fc; margin-bottom: 0; }
      nav ul { display: flex; gap: .25rem; list-style: none; margin: 0; padding: .4rem 1rem 0; border-bottom: 1px solid #c9d1da; }
      nav a { display: block; padding: .35rem .8rem; text-decoration: none; color: #1d232a; border: 1px solid transparent; border-bottom: none; border-radius: 4px 4px 0 0; }
      nav a[aria-current='page'] { border-color: #c9d1da; background: #fff; margin-bottom: -1px; font-weight: 600; }
      main { padding: 1rem; max-width: 1100px; }
      .banner { margin: 0; border-radius: 0; }
    `,
  ]
  declare status: AdminStatus | null
  /** The signed-in user's display name (or e-mail). */
  declare who: string
  declare route: Route
  declare failure: string
  declare signedOut: boolean
  declare adminOpen: boolean
  /** A message from the last view (flash.ts), shown until the next navigation. */
  declare flashText: string
  private flashNavigations = 0

  constructor() {
    super()
    this.status = null
    this.who = ''
    this.route = currentRoute()
    this.failure = ''
    this.signedOut = false
    this.adminOpen = false
    this.flashText = ''
  }

  private onHash = () => {
    this.route = currentRoute()
    this.adminOpen = false
    // The navigation the message came with is the first; the next one clears it.
    if (this.flashText && ++this.flashNavigations > 1) this.flashText = ''
  }

  private onFlash = () => {
    this.flashText = takeFlash() ?? ''
    this.flashNavigations = 0
  }

  override connectedCallback() {
    super.connectedCallback()
    addEventListener('hashchange', this.onHash)
    addEventListener('svc-flash', this.onFlash)
    this.addEventListener('svc-status-changed', () => void this.load())
    void this.load()
  }

  override disconnectedCallback() {
    removeEventListener('hashchange', this.onHash)
    removeEventListener('svc-flash', this.onFlash)
    super.disconnectedCallback()
  }

  /** Reads who the browser is signed in as; without a session, shows how to sign in. */
  async load(): Promise<void> {
    try {
      const [status, me] = await Promise.all([api<AdminStatus>('GET', '/api/v1/admin/status'), api<{principal: {displayName?: string; email?: string}}>('GET', '/api/v1/auth/me')])
      this.who = me.principal.displayName || me.principal.email || status.principal.id
      this.status = status
      this.signedOut = false
      document.title = status.hubName ? `${status.hubName} - svc Hub` : 'svc Hub'
      // Sent here to sign in from a page route (the artifact page): go back to it.
      const back = returnTo()
      if (back) return location.replace(back)
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        // Nothing signs a browser in for coming from loopback (an agent shares the host): the
        // signed-out page says how (`svc web`, or the identity provider of a hosted Hub).
        this.signedOut = true
        return
      }
      this.failure = (err as Error).message
      return
    }
    resetReadiness()
    // Desktop alerts for the user's own agents, once the browser allowed them (agent pages ask).
    if (notificationsSupported() && Notification.permission === 'granted') startDesktopAlerts()
    await this.updateComplete
    void markReady('shell')
  }

  /** Revokes the web session; the page then says how to sign in again. */
  private signOut = async () => {
    await api('POST', '/api/v1/auth/logout', {}).catch(() => undefined)
    this.status = null
    this.signedOut = true
  }

  private allowed(tab: Tab) {
    return tab.permission === null || !!this.status?.permissions.includes(tab.permission)
  }

  private view() {
    const s = this.status!
    const [first = '', second] = this.route.parts
    if (!first) return html`<svc-home></svc-home>`
    const name = first
    const tab = TABS.find((t) => t.route === name)
    if (!tab) return notFoundView(`The web client has no page "${this.route.parts.join('/')}".`)
    if (!this.allowed(tab)) return html`<p class="notice error" role="alert">You do not have permission to open ${tab.label}.</p>`
    const can = (p: string) => s.permissions.includes(p)
    switch (name) {
      case 'settings':
        return html`<svc-settings .canWrite=${can('admin.server_config.write')}></svc-settings>`
      case 'maintenance':
        return html`<svc-maintenance .canWrite=${can('admin.maintenance.write')}></svc-maintenance>`
      case 'profiling':
        return html`<svc-profiling .canWrite=${can('admin.profiling.write')}></svc-profiling>`
      case 'templates':
        return html`<svc-templates></svc-templates>`
      case 'adoption':
        return html`<svc-adoption></svc-adoption>`
      case 'approvals':
        if (second) return notFoundView(`The web client has no page "${this.route.parts.join('/')}".`)
        return html`<svc-approvals></svc-approvals>`
      case 'agents':
        // `#/agents/<id>` is one agent; anything deeper is no page of ours.
        if (this.route.parts.length > 2) return notFoundView(`The web client has no page "${this.route.parts.join('/')}".`)
        // `#/agents?project=<id>&group=<name>`: the attempts of one task side by side (teams.md).
        if (!second && this.route.query.get('group')) return keyed(`${this.route.query.get('project')}/${this.route.query.get('group')}`, html`<svc-attempts .projectId=${this.route.query.get('project') ?? ''} .group=${this.route.query.get('group') ?? ''}></svc-attempts>`)
        // A new element per project: the list (and its event filter) is that project's from the start.
        return second ? html`<svc-agent .agentId=${second}></svc-agent>` : keyed(this.route.query.get('project') ?? '', html`<svc-agents .projectId=${this.route.query.get('project') ?? ''}></svc-agents>`)
      default:
        // `#/projects/<id>/artifacts`: the project's artifacts; other paths under projects are no page.
        if (second && this.route.parts[2] === 'artifacts' && this.route.parts.length === 3) return html`<svc-artifacts .projectId=${second}></svc-artifacts>`
        if (second) return notFoundView(`The web client has no page "${this.route.parts.join('/')}".`)
        return html`<svc-projects></svc-projects>`
    }
  }

  override render() {
    if (this.signedOut) return html`<svc-sign-in></svc-sign-in>`
    if (this.failure) return html`<main><p class="notice error" role="alert">${this.failure}</p></main>`
    if (!this.status) return html`<main><p class="muted" role="status">Loading…</p></main>`
    const s = this.status
    const active = this.route.parts[0] ?? ''
    const link = (t: Tab) => html`<li><a href="#/${t.route}" data-tab=${t.route} aria-current=${active === t.route ? 'page' : 'false'}>${t.label}</a></li>`
    const admin = TABS.filter((t) => t.permission !== null && this.allowed(t))
    const adminActive = admin.find((t) => t.route === active)
    return html`
      <header>
        <a class="home" href="#/" id="home-link">svc Hub</a>
        ${s.hubName ? html`<span class="hub-name" id="hub-name">${s.hubName}</span>` : ''}
        <span class="mode">${s.mode}</span>
        <span class="who" id="signed-in-as">Signed in as ${this.who}${s.systemAdmin ? ' (system admin)' : ''}</span>
        ${s.credentialKind === 'session' ? html`<button class="sign-out" @click=${this.signOut}>Sign out</button>` : ''}
      </header>
      ${s.maintenance.enabled ? html`<p class="notice error banner" role="status" id="maintenance-banner">Maintenance mode is on: only system admins can change anything.</p>` : ''}
      <nav aria-label="Hub sections">
        <ul>
          ${TABS.filter((t) => t.permission === null).map(link)}
          ${admin.length
            ? html`<li class="admin">
                <details id="admin-menu" .open=${this.adminOpen} @toggle=${(e: Event) => (this.adminOpen = (e.target as HTMLDetailsElement).open)}>
                  <summary class=${adminActive ? 'current' : ''}>Admin${adminActive ? html`: ${adminActive.label}` : ''}</summary>
                  <ul class="menu" aria-label="Admin">${admin.map(link)}</ul>
                </details>
              </li>`
            : ''}
        </ul>
      </nav>
      ${this.flashText ? html`<p class="notice banner" role="status" id="flash">${this.flashText}</p>` : ''}
      <main>${this.view()}</main>
    `
  }
}
customElements.define('svc-app', SvcApp)
