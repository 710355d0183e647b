import {LitElement, html} from 'lit'
import type {DeletedBranchDto} from '../../../src/api/dto.js'
import {api, ApiError} from '../api.js'
import {flash} from '../flash.js'
import {shared} from '../styles.js'
import type {Agent} from './svc-agents.js'

/** Phases in which the agent is not running and Start (not Stop) applies. */
const AT_REST = new Set(['stopped', 'error', 'offline'])

/**
 * Stop, Start and Delete of one agent through the Hub (`POST .../stop`, `.../start`,
 * `DELETE`). Which of Stop and Start is offered follows the agent's phase, which the agent page
 * keeps live from the event stream. Delete asks first, in the page, offering to delete the
 * agent's branch too once merged (`?branch=true`; what became of it is flashed on the next page).
 * A refusal is shown inline with the Hub's message. Fires `agent-deleted` once the Hub removed the agent.
 */
export class SvcAgentControls extends LitElement {
  static properties = {agent: {}, busy: {state: true}, confirming: {state: true}, error: {state: true}, withBranch: {state: true}}
  static styles = shared
  declare agent: Agent
  declare busy: boolean
  declare confirming: boolean
  declare error: string
  declare withBranch: boolean

  constructor() {
    super()
    this.busy = false
    this.confirming = false
    this.error = ''
    this.withBranch = false
  }

  private async run(method: string, suffix: string) {
    this.busy = true
    this.error = ''
    try {
      const res = await api<{branch?: DeletedBranchDto}>(method, `/api/v1/agents/${encodeURIComponent(this.agent.id)}${suffix}`, method === 'POST' ? {} : undefined)
      if (method === 'DELETE') {
        const b = res?.branch
        if (b) flash(`Deleted agent ${this.agent.name}. ${b.deleted ? `Deleted its branch ${b.name} (merged).` : `Kept its branch ${b.name}: ${b.reason ?? 'not merged'}.`}`)
        this.dispatchEvent(new CustomEvent('agent-deleted', {bubbles: true, composed: true}))
      }
    } catch (err) {
      // The envelope's message says why (forbidden, maintenance, no broker, ...).
      this.error = err instanceof ApiError ? `${err.message} (${err.code})` : String(err)
    } finally {
      this.busy = false
      this.confirming = false
    }
  }

  override render() {
    const a = this.agent
    const resting = AT_REST.has(a.phase)
    return html`<div class="row" role="group" aria-label="Agent actions">
        ${resting
          ? html`<button id="agent-start" class="primary" ?disabled=${this.busy} @click=${() => this.run('POST', '/start')}>Start</button>`
          : html`<button id="agent-stop" ?disabled=${this.busy} @click=${() => this.run('POST', '/stop')}>Stop</button>`}
        ${this.confirming
          ? html`<span id="delete-question">Delete agent ${a.name}? Its terminal, logs and workspace go too.</span>
              ${a.workspace
                ? html`<label><input type="checkbox" id="agent-delete-branch" .checked=${this.withBranch} @change=${(e: Event) => (this.withBranch = (e.target as HTMLInputElement).checked)} /> Also delete its branch ${a.workspace.branch} if merged</label>`
                : ''}
              <button id="agent-delete-confirm" class="danger" ?disabled=${this.busy} @click=${() => this.run('DELETE', this.withBranch && a.workspace ? '?branch=true' : '')}>Delete ${a.name}</button>
              <button id="agent-delete-cancel" @click=${() => (this.confirming = false)}>Cancel</button>`
          : html`<button id="agent-delete" class="danger" ?disabled=${this.busy} @click=${() => (this.confirming = true)}>Delete…</button>`}
      </div>
      ${this.error ? html`<p class="notice error" role="alert" id="agent-action-error">${this.error}</p>` : ''}`
  }
}
customElements.define('svc-agent-controls', SvcAgentControls)
