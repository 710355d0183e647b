import {html, css} from 'lit'
import type {AgentDto, ProjectDto} from '../../../src/api/dto.js'
import {api} from '../api.js'
import {shared} from '../styles.js'
import {LoadedView} from './svc-loaded-view.js'
import './svc-projects.js'

interface HomeData {
  projects: ProjectDto[]
  agents: number
}

/**
 * The first page (`#/`). While the user has no agent it says what to do, step by step (register
 * a project from a checkout, create an agent, land its work), each step marked done once it is;
 * below it, the projects (once there are any). A user with agents gets the projects as before.
 */
export class SvcHome extends LoadedView<HomeData> {
  static styles = [
    shared,
    css`
      #get-started { max-width: 760px; }
      #get-started ol { padding-left: 1.25rem; }
      #get-started li { margin: .6rem 0; line-height: 1.45; }
      #get-started li[data-done='true'] .step::after { content: ' ✓ done'; color: #1a7f37; font-weight: 400; }
      #get-started pre { margin: .3rem 0; padding: .35rem .6rem; background: #f4f6f8; border: 1px solid #d8dee4; border-radius: 4px; }
    `,
  ]
  protected readonly view = 'home'
  protected async fetchData(): Promise<HomeData> {
    const [projects, agents] = await Promise.all([api<{projects: ProjectDto[]}>('GET', '/api/v1/projects'), api<{agents: AgentDto[]}>('GET', '/api/v1/agents')])
    return {projects: projects.projects, agents: agents.agents.length}
  }

  private steps(d: HomeData) {
    const linked = d.projects.find((p) => p.localPath)
    return html`<section id="get-started" class="notice" aria-labelledby="get-started-title">
      <h2 id="get-started-title">Get started</h2>
      <p>You have no agents yet. An agent is a coding assistant (Claude Code, Codex, Gemini, OpenCode or a plain shell) working in a sandbox on its own branch of your project; you watch it here and land its work when it is good.</p>
      <ol>
        <li data-step="register" data-done=${linked ? 'true' : 'false'}>
          <strong class="step">Register a project.</strong> In a git checkout of your project, run
          <pre><code>svc project register</code></pre>
          ${linked ? html`<span class="muted">${linked.name} is linked to <code>${linked.localPath}</code>.</span>` : html`<span class="muted">Its agents then start from that checkout, each on a branch <code>svc/&lt;name&gt;</code>.</span>`}
        </li>
        <li data-step="create" data-done="false">
          <strong class="step">Create an agent</strong> with its task, in the same checkout:
          <pre><code>svc agent create alice "Fix the failing test in src/parser.ts"</code></pre>
          <span class="muted">It appears under Agents; its page shows its terminal and tells you when it needs you.</span>
        </li>
        <li data-step="land" data-done="false">
          <strong class="step">Review and land its work</strong> on the agent's Changes tab (Merge), or with
          <pre><code>svc agent merge alice</code></pre>
        </li>
      </ol>
      <p class="muted">Every step has its command in <code>svc --help</code>; <code>svc web</code> signs this browser in again.</p>
    </section>`
  }

  override render() {
    const waiting = this.pending('Loading…')
    const d = this.data
    if (waiting || !d) return waiting
    return html`${d.agents === 0 ? this.steps(d) : ''}${d.projects.length ? html`<svc-projects></svc-projects>` : html`<p class="muted" id="no-projects">No projects yet.</p>`}`
  }
}
customElements.define('svc-home', SvcHome)
