import {LitElement, html} from 'lit'
import {api, ApiError} from '../api.js'
import {diffStyles, parsePatch, sideBySide, unified, type DiffFile, type DiffLine} from '../diff-view.js'
import {shared} from '../styles.js'
import type {AgentDiffDto, MergeResultDto, PushResultDto} from '../../../src/api/dto.js'

type AgentDiff = AgentDiffDto

/** How often the Changes tab asks again while the agent runs (it is git work on the broker). */
export const CHANGES_POLL_MS = 5000

const LETTER: Record<string, string> = {added: 'A', modified: 'M', deleted: 'D', renamed: 'R', copied: 'C', typechange: 'T'}

/**
 * An agent's Changes tab: the files it changed since its base commit and their diff (unified or
 * side by side, syntax-coloured), refreshed while it runs, with Merge and Push. A refusal
 * (conflict, dirty checkout, ...) is shown inline with the files it names.
 */
export class SvcAgentChanges extends LitElement {
  static properties = {
    agentId: {},
    running: {type: Boolean},
    diff: {state: true},
    selected: {state: true},
    layout: {state: true},
    strategy: {state: true},
    message: {state: true},
    busy: {state: true},
    outcome: {state: true},
    failure: {state: true},
  }
  static styles = [shared, diffStyles]
  declare agentId: string
  declare running: boolean
  declare diff: AgentDiff | null
  declare selected: string | null
  declare layout: 'unified' | 'split'
  declare strategy: 'merge' | 'squash'
  declare message: string
  declare busy: boolean
  declare outcome: {ok: boolean; text: string; files?: string[]; code?: string} | null
  declare failure: string
  private stop: (() => void) | null = null
  private sections = new Map<string, DiffLine[]>()

  constructor() {
    super()
    this.agentId = ''
    this.running = false
    this.diff = null
    this.selected = null
    this.layout = 'unified'
    // A merge commit, as `svc agent merge` and the API default to: the agent's commits stay visible.
    this.strategy = 'merge'
    this.message = ''
    this.busy = false
    this.outcome = null
    this.failure = ''
  }

  private get base() {
    return `/api/v1/agents/${encodeURIComponent(this.agentId)}`
  }

  override connectedCallback() {
    super.connectedCallback()
    // The diff is the worktree's files, which change without any event: while the agent runs it
    // is read again every few seconds (one light request; the agent state itself comes from the
    // event stream); a stopped agent's diff is read once.
    let timer: ReturnType<typeof setTimeout> | undefined
    let stopped = false
    const tick = async () => {
      try {
        if (!this.diff || this.running) await this.load()
      } finally {
        if (!stopped) timer = setTimeout(tick, CHANGES_POLL_MS)
      }
    }
    void tick()
    this.stop = () => {
      stopped = true
      clearTimeout(timer)
    }
  }

  /** The page may switch to another agent in place: start over with its diff. */
  override willUpdate(changed: Map<string, unknown>) {
    if (changed.has('agentId') && changed.get('agentId')) {
      this.diff = null
      this.selected = null
      this.message = ''
      this.outcome = null
      this.failure = ''
      void this.load()
    }
  }

  override disconnectedCallback() {
    this.stop?.()
    super.disconnectedCallback()
  }

  /** Reads the diff; an answer for an agent the page has since left is dropped. */
  private async load() {
    const id = this.agentId
    try {
      const d = await api<AgentDiff>('GET', `${this.base}/diff`)
      if (id !== this.agentId) return
      this.sections = parsePatch(d.patch, d.files)
      this.diff = d
      if (this.selected && !d.files.some((f) => f.path === this.selected)) this.selected = null
      this.failure = ''
      this.dataset.ready = 'true'
    } catch (err) {
      if (id !== this.agentId) return
      this.failure = err instanceof ApiError ? `${err.message} (${err.code})` : (err as Error).message
      this.dataset.ready = 'true'
    }
  }

  private async land(action: 'merge' | 'push') {
    this.busy = true
    this.outcome = null
    try {
      if (action === 'merge') {
        const r = await api<MergeResultDto>('POST', `${this.base}/merge`, {strategy: this.strategy, ...(this.message.trim() && {message: this.message.trim()})})
        this.outcome = {ok: true, text: `${this.strategy === 'squash' ? 'Squashed' : 'Merged'} ${r.branch} into ${r.baseRef}: commit ${r.commit.slice(0, 12)} (${r.files.length} files).`}
      } else {
        const r = await api<PushResultDto>('POST', `${this.base}/push`, {})
        this.outcome = {ok: true, text: `Pushed ${r.branch} to ${r.remote}: ${r.url}`}
      }
      await this.load()
    } catch (err) {
      const e = err as ApiError
      this.outcome = {ok: false, code: e.code, text: e.message, files: Array.isArray(e.details?.files) ? e.details.files : undefined}
    } finally {
      this.busy = false
    }
  }

  private fileList(files: DiffFile[]) {
    return html`<nav class="files" aria-label="Changed files">
      <button aria-current=${this.selected === null ? 'true' : 'false'} @click=${() => (this.selected = null)}><span class="path">All files (${files.length})</span></button>
      ${files.map(
        (f) => html`<button data-path=${f.path} aria-current=${this.selected === f.path ? 'true' : 'false'} @click=${() => (this.selected = f.path)} title=${f.oldPath ? `${f.oldPath} → ${f.path}` : f.path}>
          <span class=${`st st-${f.status}`} aria-label=${f.status}>${LETTER[f.status] ?? '?'}</span>
          <span class="path">${f.path}</span>
          ${f.binary ? html`<span class="muted">binary</span>` : html`<span class="plus">+${f.additions}</span><span class="minus">-${f.deletions}</span>`}
        </button>`,
      )}
    </nav>`
  }

  private fileDiff(f: DiffFile) {
    const lines = this.sections.get(f.path)
    const title = html`<h4>${f.oldPath ? `${f.oldPath} → ${f.path}` : f.path}</h4>`
    if (f.binary) return html`${title}<p class="muted">Binary file, not shown.</p>`
    if (!lines) return html`${title}<p class="muted">Not in the patch (it was cut short).</p>`
    return html`${title}${this.layout === 'split' ? sideBySide(f.path, lines) : unified(f.path, lines)}`
  }

  private controls() {
    const o = this.outcome
    return html`<div class="row spaced" role="group" aria-label="Land the work">
        <label>Strategy <select aria-label="Merge strategy" .value=${this.strategy} @change=${(e: Event) => (this.strategy = (e.target as HTMLSelectElement).value as 'merge' | 'squash')}>
          <option value="merge">Merge commit</option>
          <option value="squash">Squash into one commit</option>
        </select></label>
        <input class="grow" aria-label="Commit message" placeholder="Commit message (optional)" .value=${this.message} @input=${(e: Event) => (this.message = (e.target as HTMLInputElement).value)} />
        <button class="primary" ?disabled=${this.busy} @click=${() => this.land('merge')}>Merge</button>
        <button ?disabled=${this.busy} @click=${() => this.land('push')}>Push</button>
      </div>
      ${o
        ? html`<div class=${`notice ${o.ok ? 'ok' : 'error'}`} role=${o.ok ? 'status' : 'alert'} id="land-outcome" data-code=${o.code ?? ''}>
            ${o.text}${o.files?.length ? html`<ul>${o.files.map((f) => html`<li><code>${f}</code></li>`)}</ul>` : ''}
          </div>`
        : ''}`
  }

  override render() {
    const d = this.diff
    if (!d) return this.failure ? html`<p class="notice error" role="alert">${this.failure}</p>` : html`<p class="muted" role="status">Loading changes…</p>`
    const shown = this.selected ? d.files.filter((f) => f.path === this.selected) : d.files
    const added = d.files.reduce((n, f) => n + f.additions, 0)
    const deleted = d.files.reduce((n, f) => n + f.deletions, 0)
    return html`
      <p id="changes-summary">
        <code>${d.head.branch}</code> against <code>${d.base.ref}</code> (${d.base.commit.slice(0, 12)}):
        ${d.files.length} file${d.files.length === 1 ? '' : 's'} changed, <span class="plus">+${added}</span> <span class="minus">-${deleted}</span>
        ${this.running ? html`<span class="muted">· updating while the agent works</span>` : ''}
      </p>
      ${this.failure ? html`<p class="notice error" role="alert">${this.failure}</p>` : ''}
      ${this.controls()}
      ${d.files.length === 0
        ? html`<p class="muted">No changes since the base commit.</p>`
        : html`<div class="row spaced">
              <label><input type="radio" name="layout" .checked=${this.layout === 'unified'} @change=${() => (this.layout = 'unified')} /> Unified</label>
              <label><input type="radio" name="layout" .checked=${this.layout === 'split'} @change=${() => (this.layout = 'split')} /> Side by side</label>
              <button @click=${() => this.load()}>Refresh</button>
            </div>
            ${d.truncated ? html`<p class="notice">The patch was cut short; files past the cut show no lines. <code>svc agent diff</code> shows it all.</p>` : ''}
            <div class="changes spaced">${this.fileList(d.files)}<div class="diffs">${shown.map((f) => this.fileDiff(f))}</div></div>`}
    `
  }
}
customElements.define('svc-agent-changes', SvcAgentChanges)
