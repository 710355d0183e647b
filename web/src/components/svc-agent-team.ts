import {LitElement, html} from 'lit'
import type {AgentDto as Agent} from '../../../src/api/dto.js'
import {applyEvent} from '../agent-events.js'
import {api} from '../api.js'
import {liveView} from '../live.js'
import {shared} from '../styles.js'
import {costText} from './agent-bits.js'

interface TreeNode {
  agent: Agent
  children: TreeNode[]
}

const agentLink = (a: {id: string; name: string}) => html`<a href="#/agents/${encodeURIComponent(a.id)}">${a.name}</a>`
/** An agent's state in one word: its activity while it runs, else its phase. */
export const stateText = (a: Agent) => (a.phase === 'running' && a.activity ? a.activity : a.phase)

/**
 * The agent page's team block: its parent (a link), its attempts' group (a link to the group
 * view), and its children with their state and cost (`GET .../tree`, one generation shown), kept
 * live: a child's event updates its row in place, a new child (an event of an agent not listed)
 * reads the tree again. Nothing is shown for an agent with no parent, group or children.
 */
export class SvcAgentTeam extends LitElement {
  static properties = {agent: {attribute: false}, children_: {state: true}, failure: {state: true}}
  static styles = shared
  declare agent: Agent
  declare children_: Agent[] | null
  declare failure: string
  private stop: (() => void) | null = null

  constructor() {
    super()
    this.children_ = null
    this.failure = ''
  }

  override connectedCallback() {
    super.connectedCallback()
    let reloading: Promise<void> | null = null
    this.stop = liveView(this, 'agent-team', () => this.load(), (e) => {
      if (!this.agent || e.projectId !== this.agent.projectId) return
      const list = this.children_ ?? []
      if (list.some((c) => c.id === e.id)) this.children_ = e.phase === 'deleted' ? list.filter((c) => c.id !== e.id) : list.map((c) => (c.id === e.id ? applyEvent(c, e) : c))
      else if (e.id !== this.agent.id && e.phase !== 'deleted') reloading ??= this.load().finally(() => (reloading = null))
    })
  }

  override disconnectedCallback() {
    this.stop?.()
    super.disconnectedCallback()
  }

  /** The page switched to another agent in place: read its children. */
  override willUpdate(changed: Map<string, unknown>) {
    const before = changed.get('agent') as Agent | undefined
    if (before && this.agent && this.agent.id !== before.id) {
      this.children_ = null
      void this.load().catch((err: Error) => (this.failure = err.message))
    }
  }

  private async load() {
    const id = this.agent?.id
    if (!id) return
    const {tree} = await api<{tree: TreeNode}>('GET', `/api/v1/agents/${encodeURIComponent(id)}/tree`)
    if (id !== this.agent.id) return
    this.children_ = tree.children.map((c) => c.agent)
  }

  override render() {
    const a = this.agent
    if (!a) return ''
    const kids = this.children_ ?? []
    if (!a.parent && !a.group && !kids.length) return ''
    const group = a.group ? `#/agents?project=${encodeURIComponent(a.projectId)}&group=${encodeURIComponent(a.group)}` : ''
    return html`<section aria-label="Team" id="agent-team">
      ${a.parent ? html`<p id="agent-parent">Parent: ${agentLink(a.parent)}</p>` : ''}
      ${a.group ? html`<p id="agent-group">Attempt of <a href=${group}>${a.group}</a> (compare the attempts and pick one)</p>` : ''}
      ${kids.length
        ? html`<h3>Children</h3>
          <table aria-label="Children">
            <thead><tr><th scope="col">Child</th><th scope="col">State</th><th scope="col">Cost</th></tr></thead>
            <tbody aria-live="polite">
              ${kids.map((c) => html`<tr data-child=${c.id}><td>${agentLink(c)}</td><td data-col="state">${stateText(c)}</td><td>${costText(c)}</td></tr>`)}
            </tbody>
          </table>`
        : ''}
      ${this.failure ? html`<p class="notice error" role="alert">${this.failure}</p>` : ''}
    </section>`
  }
}
customElements.define('svc-agent-team', SvcAgentTeam)
