import {LitElement, html} from 'lit'
import type {AgentDto as Agent} from '../../../src/api/dto.js'
import {api} from '../api.js'
import {shared} from '../styles.js'

interface PortView {
  port: number
  url: string | null
}

/** How often the listening ports are read again while the page shows a running agent. */
const REFRESH_MS = 5000

/**
 * The agent page's ports: what the running agent listens on (`GET .../ports`, read again every
 * few seconds: a dev server it starts shows up), each a link to its preview through the Hub
 * when the Hub previews ports, else the `svc agent forward` command that reaches it. Nothing
 * is shown while it listens on nothing.
 */
export class SvcAgentPorts extends LitElement {
  static properties = {agent: {attribute: false}, ports: {state: true}}
  static styles = shared
  declare agent: Agent
  declare ports: PortView[]
  private timer: number | null = null

  constructor() {
    super()
    this.ports = []
  }

  override connectedCallback() {
    super.connectedCallback()
    void this.load()
    this.timer = window.setInterval(() => void this.load(), REFRESH_MS)
  }

  override disconnectedCallback() {
    if (this.timer !== null) window.clearInterval(this.timer)
    super.disconnectedCallback()
  }

  private async load() {
    const a = this.agent
    if (!a || a.phase !== 'running') return void (this.ports = [])
    try {
      const {ports} = await api<{ports: PortView[]}>('GET', `/api/v1/agents/${encodeURIComponent(a.id)}/ports`)
      if (a.id === this.agent?.id) this.ports = ports
    } catch {
      // Its broker is away or it stopped: nothing to link to until the next read.
      this.ports = []
    }
  }

  override render() {
    if (!this.agent || !this.ports.length) return ''
    return html`<section aria-label="Ports" id="agent-ports">
      <p>
        Listening:
        ${this.ports.map(
          (p) => html`<span class="port">${p.url ? html`<a href=${p.url} target="_blank" rel="noopener noreferrer">${p.port}</a>` : html`${p.port} <code>svc agent forward ${this.agent.name} ${p.port}</code>`}</span> `,
        )}
      </p>
    </section>`
  }
}
customElements.define('svc-agent-ports', SvcAgentPorts)
