import {LitElement, html} from 'lit'
import type {AgentDto as Agent} from '../../../src/api/dto.js'
import {api} from '../api.js'
import {pollView} from '../poll.js'
import {shared} from '../styles.js'

export type {Agent}

/** How often lists follow agents' phase and activity. */
export const AGENT_POLL_MS = 2000

/** Agents the caller can see (of one project with `projectId`), phase and activity kept live. */
export class SvcAgents extends LitElement {
  static properties = {projectId: {}, agents: {state: true}, failure: {state: true}}
  static styles = shared
  declare projectId: string
  declare agents: Agent[] | null
  declare failure: string
  private stop: (() => void) | null = null

  constructor() {
    super()
    this.projectId = ''
    this.agents = null
    this.failure = ''
  }

  override connectedCallback() {
    super.connectedCallback()
    this.stop = pollView(this, 'agents', async () => {
      const q = this.projectId ? `?projectId=${encodeURIComponent(this.projectId)}` : ''
      this.agents = (await api<{agents: Agent[]}>('GET', `/api/v1/agents${q}`)).agents
    }, AGENT_POLL_MS)
  }

  override disconnectedCallback() {
    this.stop?.()
    super.disconnectedCallback()
  }

  override render() {
    return html`<h2>Agents${this.projectId ? html` <span class="muted">of project <code>${this.projectId}</code></span>` : ''}</h2>
      ${this.failure ? html`<p class="notice error" role="alert">${this.failure}</p>` : ''}
      ${!this.agents
        ? html`<p class="muted" role="status">Loading agents…</p>`
        : !this.agents.length
          ? html`<p class="muted">No agents.</p>`
          : html`<table aria-label="Agents">
              <thead><tr><th scope="col">Name</th><th scope="col">Phase</th><th scope="col">Activity</th><th scope="col">Detail</th></tr></thead>
              <tbody aria-live="polite">
                ${this.agents.map(
                  (a) => html`<tr data-agent=${a.id}>
                    <td><a href="#/agents/${encodeURIComponent(a.id)}">${a.name}</a></td>
                    <td data-col="phase">${a.phase}</td>
                    <td data-col="activity">${a.activity ?? ''}</td>
                    <td>${a.detail ?? a.error ?? ''}</td>
                  </tr>`,
                )}
              </tbody>
            </table>`}`
  }
}
customElements.define('svc-agents', SvcAgents)
