import {LitElement, html} from 'lit'
import {api} from '../api.js'
import {pollView} from '../poll.js'
import {shared} from '../styles.js'
import {terminalText} from '../terminal-text.js'
import {AGENT_POLL_MS, type Agent} from './svc-agents.js'
import './svc-terminal.js'

/**
 * One agent: phase and activity kept live, its logs (followed while it runs, else the archived
 * output), and its terminal on demand (attach).
 */
export class SvcAgent extends LitElement {
  static properties = {agentId: {}, agent: {state: true}, archived: {state: true}, attached: {state: true}, failure: {state: true}}
  static styles = shared
  declare agentId: string
  declare agent: Agent | null
  declare archived: string | null
  declare attached: boolean
  declare failure: string
  private stop: (() => void) | null = null

  constructor() {
    super()
    this.agentId = ''
    this.agent = null
    this.archived = null
    this.attached = false
    this.failure = ''
  }

  override connectedCallback() {
    super.connectedCallback()
    this.stop = pollView(this, 'agent', async () => {
      this.agent = (await api<{agent: Agent}>('GET', `/api/v1/agents/${encodeURIComponent(this.agentId)}`)).agent
      if (this.agent.phase !== 'running' && this.archived === null) this.archived = await this.archivedLogs()
    }, AGENT_POLL_MS)
  }

  override disconnectedCallback() {
    this.stop?.()
    super.disconnectedCallback()
  }

  private async archivedLogs(): Promise<string> {
    const res = await fetch(`/api/v1/agents/${encodeURIComponent(this.agentId)}/logs`, {credentials: 'same-origin'})
    return res.ok ? terminalText(await res.text()) : ''
  }

  override render() {
    const a = this.agent
    if (this.failure && !a) return html`<p class="notice error" role="alert">${this.failure}</p>`
    if (!a) return html`<p class="muted" role="status">Loading agent…</p>`
    const base = `/api/v1/agents/${encodeURIComponent(a.id)}`
    const running = a.phase === 'running'
    return html`
      <p><a href="#/agents?project=${encodeURIComponent(a.projectId)}">← Agents of this project</a></p>
      <h2>Agent ${a.name}</h2>
      <table aria-label="Agent status">
        <tbody>
          <tr><th scope="row">Phase</th><td id="agent-phase">${a.phase}</td></tr>
          <tr><th scope="row">Activity</th><td id="agent-activity">${a.activity ?? ''}</td></tr>
          <tr><th scope="row">Detail</th><td>${a.detail ?? a.error ?? ''}</td></tr>
        </tbody>
      </table>
      <h3>Terminal</h3>
      ${!running
        ? html`<p class="muted">The agent is not running; its terminal opens while it runs.</p>`
        : this.attached
          ? html`<svc-terminal id="attach" .src=${`${base}/attach?cols=120&rows=32`} interactive label="Terminal"></svc-terminal>
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
