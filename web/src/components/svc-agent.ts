import {LitElement, html} from 'lit'
import {applyEvent, needsYou} from '../agent-events.js'
import {api, ApiError} from '../api.js'
import {projectOrNull} from '../projects.js'
import {notificationsSupported, startDesktopAlerts} from '../desktop-alerts.js'
import {liveView} from '../live.js'
import {shared} from '../styles.js'
import {errorBadge, errorNotice, needsYouBadge, usageRows} from './agent-bits.js'
import type {Agent} from './svc-agents.js'
import {PANE_SIZE} from './svc-terminal.js'
import './svc-agent-changes.js'
import './svc-agent-controls.js'
import './svc-agent-team.js'
import './svc-agent-ports.js'
import './svc-agent-approvals.js'
import {notFoundView} from './not-found.js'

/**
 * One agent: phase and activity kept live by the event stream (a "Needs you" notice while it
 * waits for input), its usage, its logs (followed while it runs, else the archived
 * output), and its terminal on demand (attach); Stop / Start / Delete (svc-agent-controls). Its
 * project is named, not shown as an ID; an unknown agent is the "not found" view.
 */
export class SvcAgent extends LitElement {
  static properties = {agentId: {}, agent: {state: true}, archived: {state: true}, attached: {state: true}, failure: {state: true}, tab: {state: true}, missing: {state: true}, projectName: {state: true}}
  static styles = shared
  declare agentId: string
  declare agent: Agent | null
  declare archived: string | null
  declare attached: boolean
  declare failure: string
  /** The Overview (status, terminal, logs) or the Changes tab (the agent's diff, merge, push). */
  declare tab: 'overview' | 'changes'
  /** The Hub answered 404 for `agentId`. */
  declare missing: boolean
  declare projectName: string
  private stop: (() => void) | null = null

  constructor() {
    super()
    this.agentId = ''
    this.agent = null
    this.archived = null
    this.attached = false
    this.failure = ''
    this.tab = 'overview'
    this.missing = false
    this.projectName = ''
  }

  override connectedCallback() {
    super.connectedCallback()
    this.stop = liveView(this, 'agent', () => this.load(), (e) => {
      if (!this.agent || e.id !== this.agent.id) return
      this.agent = applyEvent(this.agent, e)
      // The rest of the record (usage, error) changes with its events: read it once more.
      void this.load().catch(() => undefined)
    })
  }

  /** The page may switch to another agent in place (same element, new id): start over with it. */
  override willUpdate(changed: Map<string, unknown>) {
    if (changed.has('agentId') && changed.get('agentId')) {
      this.agent = null
      this.archived = null
      this.attached = false
      this.failure = ''
      this.tab = 'overview'
      this.missing = false
      this.projectName = ''
      this.load().catch((err: Error) => (this.failure = err.message))
    }
  }

  /** Reads the agent; an answer for an agent the page has since left is dropped. */
  private async load() {
    const id = this.agentId
    let agent: Agent
    try {
      agent = (await api<{agent: Agent}>('GET', `/api/v1/agents/${encodeURIComponent(id)}`)).agent
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err
      if (id === this.agentId) this.missing = true
      return
    }
    if (id !== this.agentId) return
    this.agent = agent
    if (!this.projectName) {
      const project = await projectOrNull(agent.projectId).catch(() => null)
      if (id === this.agentId) this.projectName = project?.name ?? agent.projectId
    }
    if (agent.phase !== 'running' && this.archived === null) {
      const archived = await this.archivedLogs(id)
      if (id === this.agentId) this.archived = archived
    }
  }

  override disconnectedCallback() {
    this.stop?.()
    super.disconnectedCallback()
  }

  /** Asks for the permission (it needs a click), then alerts follow (desktop-alerts.ts). */
  private enableNotifications = async () => {
    if ((await Notification.requestPermission()) === 'granted') startDesktopAlerts()
    this.requestUpdate()
  }

  private async archivedLogs(id: string): Promise<string> {
    const res = await fetch(`/api/v1/agents/${encodeURIComponent(id)}/logs`, {credentials: 'same-origin'})
    // The Hub renders the output through a terminal emulator: screen text, ready for a <pre>.
    return res.ok ? res.text() : ''
  }

  override render() {
    const a = this.agent
    if (this.missing) return notFoundView(`There is no agent "${this.agentId}" that you can see.`)
    if (this.failure && !a) return html`<p class="notice error" role="alert">${this.failure}</p>`
    if (!a) return html`<p class="muted" role="status">Loading agent…</p>`
    const base = `/api/v1/agents/${encodeURIComponent(a.id)}`
    const running = a.phase === 'running'
    return html`
      <p><a href="#/agents?project=${encodeURIComponent(a.projectId)}">← Agents of ${this.projectName || 'this project'}</a></p>
      <h2>Agent ${a.name} ${needsYouBadge(a)} ${errorBadge(a)} <span class="muted">in project <span id="agent-project">${this.projectName}</span></span></h2>
      <svc-agent-controls .agent=${a} @agent-deleted=${() => (location.hash = `#/agents?project=${encodeURIComponent(a.projectId)}`)}></svc-agent-controls>
      ${errorNotice(a)}
      <svc-agent-team .agent=${a}></svc-agent-team>
      <svc-agent-ports .agent=${a}></svc-agent-ports>
      ${needsYou(a) ? html`<p class="notice needs-you" role="alert" id="needs-you">This agent needs you: ${a.detail || 'it is waiting for your input'}. ${a.detail?.startsWith('Permission:') ? 'Allow or deny it below, or attach to its terminal.' : 'Attach to its terminal to answer.'}</p>` : ''}
      <svc-agent-approvals .agent=${a}></svc-agent-approvals>
      ${notificationsSupported() && Notification.permission === 'default'
        ? html`<p><button id="enable-notifications" @click=${this.enableNotifications}>Notify me when my agents need me</button></p>`
        : ''}
      <div class="row" role="tablist" aria-label="Agent views">
        <button role="tab" aria-selected=${this.tab === 'overview'} class=${this.tab === 'overview' ? 'primary' : ''} @click=${() => (this.tab = 'overview')}>Overview</button>
        <button role="tab" aria-selected=${this.tab === 'changes'} class=${this.tab === 'changes' ? 'primary' : ''} @click=${() => (this.tab = 'changes')}>Changes${a.workspace ? '' : ' (no workspace)'}</button>
      </div>
      ${this.tab === 'changes'
        ? html`<svc-agent-changes .agentId=${a.id} .running=${running}></svc-agent-changes>`
        : this.overview(a, base, running)}
    `
  }

  private overview(a: Agent, base: string, running: boolean) {
    return html`
      <table aria-label="Agent status">
        <tbody>
          <tr><th scope="row">Phase</th><td id="agent-phase">${a.phase}</td></tr>
          <tr><th scope="row">Activity</th><td id="agent-activity">${a.activity ?? ''}</td></tr>
          <tr><th scope="row">Detail</th><td>${a.detail ?? a.error ?? ''}</td></tr>
          ${usageRows(a)}
        </tbody>
      </table>
      <h3>Terminal</h3>
      ${!running
        ? html`<p class="muted">The agent is not running; its terminal opens while it runs.</p>`
        : this.attached
          ? html`<svc-terminal id="attach" .src=${`${base}/attach?cols=${PANE_SIZE.cols}&rows=${PANE_SIZE.rows}`} interactive label="Terminal"></svc-terminal>
              <button @click=${() => (this.attached = false)}>Detach</button>`
          : html`<button class="primary" @click=${() => (this.attached = true)}>Attach to the terminal</button>`}
      <h3>Logs</h3>
      ${running
        ? html`<svc-terminal id="logs" .src=${`${base}/logs`} label="Logs"></svc-terminal>`
        : html`<pre class="term" tabindex="0" aria-label="Logs">${this.archived ?? ''}</pre>`}
    `
  }
}
customElements.define('svc-agent', SvcAgent)
