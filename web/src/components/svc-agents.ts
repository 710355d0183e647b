import {LitElement, html} from 'lit'
import type {AgentDto as Agent} from '../../../src/api/dto.js'
import {applyEvent, needsYou} from '../agent-events.js'
import {api} from '../api.js'
import {liveView} from '../live.js'
import {shared} from '../styles.js'
import {notificationsSupported, startDesktopAlerts} from '../desktop-alerts.js'
import {projectNames, projectOrNull} from '../projects.js'
import {costText, errorBadge, harnessFailed, needsYouBadge} from './agent-bits.js'
import {notFoundView} from './not-found.js'
import './svc-agent-forest.js'

export type {Agent}

/**
 * Agents the caller can see (of one project with `projectId`), phase and activity kept live by
 * the event stream (GET /api/v1/events); an agent waiting for input is marked "Needs you" and
 * listed first. Projects are shown by name: the one project in the heading, or a Project
 * column when every agent is listed. An unknown project is the "not found" view.
 */
export class SvcAgents extends LitElement {
  static properties = {projectId: {}, view: {state: true}, agents: {state: true}, failure: {state: true}, names: {state: true}, missing: {state: true}}
  static styles = shared
  declare projectId: string
  declare agents: Agent[] | null
  declare failure: string
  /** Project names by ID (one entry with `projectId`). */
  declare names: Map<string, string>
  /** `projectId` names no project the caller can read. */
  declare missing: boolean
  /** The agents as a table (list) or as teams under their parents (tree). */
  declare view: 'list' | 'tree'
  private stop: (() => void) | null = null

  constructor() {
    super()
    this.projectId = ''
    this.agents = null
    this.failure = ''
    this.names = new Map()
    this.missing = false
    this.view = 'list'
  }

  override connectedCallback() {
    super.connectedCallback()
    let reloading: Promise<void> | null = null
    const load = async () => {
      if (this.projectId) {
        const p = await projectOrNull(this.projectId)
        this.missing = !p
        if (!p) return
        this.names = new Map([[p.id, p.name]])
      } else this.names = await projectNames()
      const q = this.projectId ? `?projectId=${encodeURIComponent(this.projectId)}` : ''
      this.agents = (await api<{agents: Agent[]}>('GET', `/api/v1/agents${q}`)).agents
    }
    this.stop = liveView(this, 'agents', load, (e) => {
      if (this.projectId && e.projectId !== this.projectId) return
      const list = this.agents ?? []
      const i = list.findIndex((a) => a.id === e.id)
      if (e.phase === 'deleted') {
        if (i >= 0) this.agents = list.filter((a) => a.id !== e.id)
      } else if (i >= 0) {
        this.agents = list.map((a, j) => (j === i ? applyEvent(a, e) : a))
        // An event does not carry the agent's error (a harness's failure): it comes with a turn's
        // end (idle) and goes with the next activity, so the agent is read once more then.
        if (e.activity === 'idle' || list[i].error) void this.refreshOne(e.id)
      }
      // A new agent: its whole record comes from one more read.
      else reloading ??= load().finally(() => (reloading = null))
    })
  }

  /** Reads one agent of the list again (its error), keeping the list as it is otherwise. */
  private async refreshOne(id: string): Promise<void> {
    const fresh = await api<{agent: Agent}>('GET', `/api/v1/agents/${encodeURIComponent(id)}`).catch(() => null)
    if (fresh && this.agents) this.agents = this.agents.map((a) => (a.id === id ? {...a, error: fresh.agent.error} : a))
  }

  /** Asks for the permission (it needs a click), then alerts follow (desktop-alerts.ts). */
  private enableNotifications = async () => {
    if ((await Notification.requestPermission()) === 'granted') startDesktopAlerts()
    this.requestUpdate()
  }

  override disconnectedCallback() {
    this.stop?.()
    super.disconnectedCallback()
  }

  override render() {
    if (this.missing) return notFoundView(`There is no project "${this.projectId}" that you can see.`)
    const all = !this.projectId
    const projectName = this.names.get(this.projectId)
    return html`<h2>Agents${all ? '' : html` of project <span id="project-name">${projectName ?? ''}</span>`}</h2>
      ${all ? '' : html`<p><a href="#/projects/${encodeURIComponent(this.projectId)}/artifacts">Artifacts of ${projectName ?? 'this project'}</a></p>`}
      ${this.failure ? html`<p class="notice error" role="alert">${this.failure}</p>` : ''}
      ${notificationsSupported() && Notification.permission === 'default'
        ? html`<p><button id="enable-notifications" @click=${this.enableNotifications}>Notify me when my agents need me</button></p>`
        : ''}
      ${!this.agents
        ? html`<p class="muted" role="status">Loading agents…</p>`
        : !this.agents.length
          ? html`<p class="muted">No agents.</p>`
          : html`${this.agents.some(needsYou) ? html`<p class="notice needs-you" role="status" id="needs-you-count">${this.agents.filter(needsYou).length} agent(s) need you.</p>` : ''}
            <div class="row" role="group" aria-label="Show agents as">${(['list', 'tree'] as const).map((v) => html`<button aria-pressed=${this.view === v} class=${this.view === v ? 'primary' : ''} @click=${() => (this.view = v)}>${v === 'list' ? 'List' : 'Tree'}</button>`)}</div>
            ${this.view === 'tree' ? html`<svc-agent-forest .agents=${this.agents}></svc-agent-forest>` : html`<table aria-label="Agents">
              <thead><tr><th scope="col">Name</th>${all ? html`<th scope="col">Project</th>` : ''}<th scope="col">Phase</th><th scope="col">Activity</th><th scope="col">Detail</th><th scope="col">Cost</th></tr></thead>
              <tbody aria-live="polite">
                ${[...this.agents.filter(needsYou), ...this.agents.filter((a) => !needsYou(a))].map(
                  (a) => html`<tr data-agent=${a.id} class=${harnessFailed(a) ? 'failed' : needsYou(a) ? 'needs-you' : ''}>
                    <td><a href="#/agents/${encodeURIComponent(a.id)}">${a.name}</a> ${needsYouBadge(a)} ${errorBadge(a)}</td>
                    ${all ? html`<td data-col="project"><a href="#/agents?project=${encodeURIComponent(a.projectId)}">${this.names.get(a.projectId) ?? a.projectId}</a></td>` : ''}
                    <td data-col="phase">${a.phase}</td>
                    <td data-col="activity">${a.activity ?? ''}</td>
                    <td>${a.detail ?? a.error ?? ''}</td>
                    <td data-col="cost">${costText(a)}</td>
                  </tr>`,
                )}
              </tbody>
            </table>`}`}`
  }
}
customElements.define('svc-agents', SvcAgents)
