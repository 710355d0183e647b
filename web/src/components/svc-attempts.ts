import {LitElement, css, html} from 'lit'
import type {AgentDiffDto, AgentDto as Agent} from '../../../src/api/dto.js'
import {applyEvent} from '../agent-events.js'
import {api} from '../api.js'
import {diffStyles, parsePatch, unified} from '../diff-view.js'
import {liveView} from '../live.js'
import {shared} from '../styles.js'
import {costText} from './agent-bits.js'
import {stateText} from './svc-agent-team.js'

type Diff = AgentDiffDto | {error: string}
const enc = encodeURIComponent
// A diff beside three others must stay readable: longer patches are cut (the file list stays whole).
const DIFF_BYTES = 256 * 1024
/**
 * A check's result is written to the record with no agent event (events are phase and activity
 * changes, which webhooks and waiters act on): while one runs, the view reads the group again
 * this often, so a result shows without a reload however long the check takes.
 */
const CHECK_POLL_MS = 1000

const live = (a: Agent) => a.phase === 'running' || a.phase === 'provisioning'
/** Run time as `svc agent compare` counts it: to now while it runs, to its last change once stopped. */
function runTime(a: Agent, now: number): string {
  const s = Math.max(0, Math.round(((live(a) ? now : Date.parse(a.updatedAt)) - Date.parse(a.createdAt)) / 1000))
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
}
const checkText = (c: Agent['check']) => (!c ? 'no check' : c.exitCode === null || c.status === 'running' ? c.status : `${c.status} (exit ${c.exitCode})`)

/**
 * The attempts of one task side by side (`#/agents?project=<id>&group=<group>`, made by `svc agent
 * create NAME --attempts N`): per attempt its state, check (with its output), turns, cost, run
 * time, diffstat and diff, and a Pick button. Pick asks for a confirmation, then `POST
 * .../pick` merges that attempt into its base branch and deletes the others (their branches kept);
 * a refusal (conflict, dirty checkout) is shown and nothing changes. Kept live by agent events:
 * a state change shows at once; the record (check, usage) and the diff are read again; and
 * while a check runs, every CHECK_POLL_MS.
 */
export class SvcAttempts extends LitElement {
  static properties = {group: {}, projectId: {}, attempts: {state: true}, diffs: {state: true}, failure: {state: true}, picking: {state: true}, outcome: {state: true}}
  static styles = [
    shared,
    diffStyles,
    css`
      .attempts { display: grid; grid-auto-flow: column; grid-auto-columns: minmax(22rem, 1fr); gap: 1rem; overflow-x: auto; }
      .attempt { border: 1px solid #ccc; border-radius: 6px; padding: 0.5rem; min-width: 0; }
      .attempt.passed { border-color: #2a7d2a; }
      .attempt.failed { border-color: #b42318; }
      .attempt .diffs { overflow-x: auto; }
    `,
  ]
  declare group: string
  declare projectId: string
  declare attempts: Agent[] | null
  declare diffs: Map<string, Diff>
  declare failure: string
  /** The attempt whose Pick is under way. */
  declare picking: string
  /** What the last Pick did, or why it was refused. */
  declare outcome: {ok: boolean; text: string} | null
  private stop: (() => void) | null = null
  private checkPoll: ReturnType<typeof setTimeout> | null = null

  constructor() {
    super()
    this.group = ''
    this.projectId = ''
    this.attempts = null
    this.diffs = new Map()
    this.failure = ''
    this.picking = ''
    this.outcome = null
  }

  override connectedCallback() {
    super.connectedCallback()
    let reloading: Promise<void> | null = null
    this.stop = liveView(this, 'attempts', () => this.load(), (e) => {
      const list = this.attempts ?? []
      if (!list.some((a) => a.id === e.id)) return
      this.attempts = e.phase === 'deleted' ? list.filter((a) => a.id !== e.id) : list.map((a) => (a.id === e.id ? applyEvent(a, e) : a))
      reloading ??= this.load().finally(() => (reloading = null))
    })
  }

  override disconnectedCallback() {
    this.stop?.()
    if (this.checkPoll) clearTimeout(this.checkPoll)
    this.checkPoll = null
    super.disconnectedCallback()
  }

  private async load() {
    const q = `?group=${enc(this.group)}${this.projectId ? `&projectId=${enc(this.projectId)}` : ''}`
    const {agents} = await api<{agents: Agent[]}>('GET', `/api/v1/agents${q}`)
    const diffs = await Promise.all(
      agents.map(async (a): Promise<[string, Diff]> => {
        try {
          return [a.id, await api<AgentDiffDto>('GET', `/api/v1/agents/${enc(a.id)}/diff?maxBytes=${DIFF_BYTES}`)]
        } catch (err) {
          return [a.id, {error: (err as Error).message}]
        }
      }),
    )
    this.attempts = agents
    this.diffs = new Map(diffs)
    if (agents.some((a) => a.check?.status === 'running')) this.pollChecks()
  }

  /** Reads the group again in CHECK_POLL_MS (one timer; a failed read shows and tries again). */
  private pollChecks() {
    if (this.checkPoll || !this.isConnected) return
    this.checkPoll = setTimeout(() => {
      this.checkPoll = null
      if (!this.isConnected) return
      this.load().then(
        () => (this.failure = ''),
        (err: Error) => {
          this.failure = err.message
          this.pollChecks()
        },
      )
    }, CHECK_POLL_MS)
  }

  private async pick(a: Agent) {
    const others = (this.attempts ?? []).filter((o) => o.id !== a.id).map((o) => o.name)
    if (!confirm(`Pick ${a.name}? Its work is merged into ${a.workspace?.baseRef ?? 'its base branch'}${others.length ? `, and ${others.join(', ')} are stopped and deleted (their branches are kept)` : ''}.`)) return
    this.picking = a.id
    this.outcome = null
    try {
      const r = await api<{picked: string; merge: {commit: string; branch: string; baseRef: string}; deleted: string[]}>('POST', `/api/v1/agents/${enc(a.id)}/pick`, {})
      this.outcome = {ok: true, text: `Picked ${r.picked}: merged ${r.merge.branch} into ${r.merge.baseRef} (${r.merge.commit.slice(0, 12)}).${r.deleted.length ? ` Deleted ${r.deleted.join(', ')}; their branches are kept.` : ''}`}
      await this.load()
    } catch (err) {
      this.outcome = {ok: false, text: `${a.name} was not picked: ${(err as Error).message}`}
    } finally {
      this.picking = ''
    }
  }

  override render() {
    const list = this.attempts
    return html`<p><a href="#/agents?project=${enc(this.projectId)}">← Agents of this project</a></p>
      <h2>Attempts of <span id="group-name">${this.group}</span></h2>
      ${this.failure ? html`<p class="notice error" role="alert">${this.failure}</p>` : ''}
      ${this.outcome ? html`<p class="notice ${this.outcome.ok ? '' : 'error'}" role=${this.outcome.ok ? 'status' : 'alert'} id="pick-outcome">${this.outcome.text}</p>` : ''}
      ${!list
        ? html`<p class="muted" role="status">Loading attempts…</p>`
        : !list.length
          ? html`<p class="muted">No attempts in group ${this.group}.</p>`
          : html`<div class="attempts">${list.map((a) => this.column(a))}</div>`}`
  }

  private column(a: Agent) {
    const d = this.diffs.get(a.id)
    const stat = d && 'files' in d ? d : null
    const patch = stat ? parsePatch(stat.patch, stat.files) : new Map()
    return html`<section class="attempt ${a.check?.status ?? ''}" data-attempt=${a.name} aria-label=${`Attempt ${a.name}`}>
      <h3><a href="#/agents/${enc(a.id)}">${a.name}</a></h3>
      <table aria-label=${`${a.name} summary`}>
        <tbody>
          <tr><th scope="row">Harness</th><td>${a.harnessConfig}</td></tr>
          <tr><th scope="row">State</th><td data-col="state">${stateText(a)}</td></tr>
          <tr><th scope="row">Check</th><td data-col="check">${checkText(a.check)}</td></tr>
          <tr><th scope="row">Turns</th><td>${a.turns}</td></tr>
          <tr><th scope="row">Cost</th><td>${costText(a) || '$0.00'}</td></tr>
          <tr><th scope="row">Time</th><td>${runTime(a, Date.now())}</td></tr>
          <tr><th scope="row">Changes</th><td data-col="diffstat">${stat ? `${stat.files.length} file${stat.files.length === 1 ? '' : 's'}, +${stat.files.reduce((n, f) => n + f.additions, 0)} -${stat.files.reduce((n, f) => n + f.deletions, 0)}` : d && 'error' in d ? d.error : '…'}</td></tr>
        </tbody>
      </table>
      ${a.check?.output ? html`<details><summary>Check output</summary><pre class="term">${a.check.output}</pre></details>` : ''}
      <p><button class="primary" data-pick=${a.name} ?disabled=${!!this.picking} @click=${() => this.pick(a)}>${this.picking === a.id ? 'Picking…' : `Pick ${a.name}`}</button></p>
      <div class="diffs">
        ${stat?.truncated ? html`<p class="muted">The patch was cut at ${DIFF_BYTES / 1024} KiB.</p>` : ''}
        ${stat ? stat.files.map((f) => html`<h4>${f.path}</h4>${f.binary ? html`<p class="muted">binary</p>` : unified(f.path, patch.get(f.path) ?? [])}`) : ''}
      </div>
    </section>`
  }
}
customElements.define('svc-attempts', SvcAttempts)
