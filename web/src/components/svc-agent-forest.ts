import {LitElement, html, type TemplateResult} from 'lit'
import type {AgentDto as Agent} from '../../../src/api/dto.js'
import {shared} from '../styles.js'
import {costText, errorBadge, needsYouBadge} from './agent-bits.js'
import {stateText} from './svc-agent-team.js'

/**
 * The project page's tree view: the agents it lists (kept live by svc-agents) as teams, each
 * under its parent, roots first in the list's order. An agent whose parent is not listed (a
 * deleted parent) is shown as a root. Nested lists, so the lineage reads as an outline.
 */
export class SvcAgentForest extends LitElement {
  static properties = {agents: {attribute: false}}
  static styles = shared
  declare agents: Agent[]

  constructor() {
    super()
    this.agents = []
  }

  override render() {
    const ids = new Set(this.agents.map((a) => a.id))
    const kids = new Map<string, Agent[]>()
    for (const a of this.agents) if (a.parent && ids.has(a.parent.id)) kids.set(a.parent.id, [...(kids.get(a.parent.id) ?? []), a])
    const roots = this.agents.filter((a) => !a.parent || !ids.has(a.parent.id))
    // Each agent once, even should records ever point in a circle.
    const seen = new Set<string>()
    const node = (a: Agent): TemplateResult => {
      seen.add(a.id)
      const under = (kids.get(a.id) ?? []).filter((c) => !seen.has(c.id))
      return html`<li data-agent=${a.id}>
        <a href="#/agents/${encodeURIComponent(a.id)}">${a.name}</a> ${needsYouBadge(a)} ${errorBadge(a)}
        <span class="muted" data-col="state">${stateText(a)}</span> <span class="muted">${costText(a)}</span>
        ${a.group ? html`<a class="muted" href="#/agents?project=${encodeURIComponent(a.projectId)}&group=${encodeURIComponent(a.group)}">attempt of ${a.group}</a>` : ''}
        ${under.length ? html`<ul>${under.map(node)}</ul>` : ''}
      </li>`
    }
    return html`<ul class="agent-tree" aria-label="Agents as a tree">${roots.map(node)}</ul>`
  }
}
customElements.define('svc-agent-forest', SvcAgentForest)
