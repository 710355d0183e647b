import {LitElement, html, css} from 'lit'
import type {SectionMeta} from '../../../src/api/settings-layout.js'
import {api, ApiError} from '../api.js'
import {shared} from '../styles.js'
import {getIn, setIn} from '../tree.js'
import {parse} from '../field-values.js'
import {mergeDiff} from '../merge-patch.js'
import type {LayoutField} from './svc-field.js'
import './svc-field.js'

export type {SectionMeta}

const ORIGIN_TEXT: Record<string, string> = {
  seeded: 'Tracks the deployment: the value comes from bootstrap and follows it until saved here.',
  managed: 'Managed here: saved through the admin API or this page.',
  bootstrap: 'Not in the database: falls back to the bootstrap value.',
}

/**
 * One settings group: a Layer-1 section (with origin, source, revision, last update, Save and
 * Reset to bootstrap) or the Layer-0 bootstrap keys (`name` null). Saves send only the changed
 * fields (a mapping as a merge patch), with the section's revision; a 409 `revision_conflict`
 * offers Reload.
 */
export class SvcSettingsSection extends LitElement {
  static properties = {
    name: {},
    meta: {attribute: false},
    fields: {attribute: false},
    view: {attribute: false},
    canWrite: {type: Boolean},
    layer0Editable: {type: Boolean},
    envOverrides: {attribute: false},
    edits: {state: true},
    errors: {state: true},
    message: {state: true},
    conflict: {state: true},
    confirmReset: {state: true},
    busy: {state: true},
  }
  static styles = [
    shared,
    css`
      section { border: 1px solid #c9d1da; border-radius: 6px; padding: .75rem 1rem; margin-bottom: 1rem; }
      dl { display: grid; grid-template-columns: max-content 1fr max-content 1fr; gap: .15rem .75rem; margin: 0 0 .5rem; font-size: 12px; }
      dt { color: #55606b; }
      dd { margin: 0; }
      .actions { margin-top: .6rem; }
    `,
  ]
  declare name: string | null
  declare meta: SectionMeta | null
  declare fields: LayoutField[]
  declare view: Record<string, unknown>
  declare canWrite: boolean
  declare layer0Editable: boolean
  declare envOverrides: string[]
  declare edits: Record<string, string | boolean>
  declare errors: Record<string, string>
  declare message: {kind: 'ok' | 'error'; text: string} | null
  declare conflict: boolean
  declare confirmReset: boolean
  declare busy: boolean

  constructor() {
    super()
    this.name = null
    this.meta = null
    this.fields = []
    this.view = {}
    this.canWrite = false
    this.layer0Editable = false
    this.envOverrides = []
    this.edits = {}
    this.errors = {}
    this.message = null
    this.conflict = false
    this.confirmReset = false
    this.busy = false
  }

  private get bootstrap() {
    return this.name === null
  }

  /** Fields that cannot be saved from here (read-only defaults, hosted Layer-0, env overrides). */
  private locked(f: LayoutField) {
    if (!this.canWrite || f.readOnly || this.envOverrides.includes(f.key)) return true
    return this.bootstrap && !this.layer0Editable
  }

  private noteOf(f: LayoutField) {
    if (this.envOverrides.includes(f.key)) return 'set by the environment'
    if (this.bootstrap) return this.layer0Editable ? 'takes effect at restart' : 'set by the deployment'
    return ''
  }

  private reload() {
    this.edits = {}
    this.errors = {}
    this.conflict = false
    this.message = null
    this.dispatchEvent(new CustomEvent('settings-reload', {bubbles: true, composed: true}))
  }

  /** The PUT body of the changed fields, or null (and field errors) when one does not parse. */
  private body(): Record<string, any> | null {
    const body: Record<string, any> = {}
    const errors: Record<string, string> = {}
    for (const f of this.fields) {
      if (!(f.key in this.edits) || this.locked(f)) continue
      try {
        const v = parse(f, this.edits[f.key])
        // A mapping (harness_configs, runtimes, env, ...) goes as a merge patch: the changed
        // entries, and null for each entry removed in the editor; anything else goes whole.
        const patch = mergeDiff(getIn(this.view, f.key) ?? null, v)
        if (patch !== undefined) setIn(body, f.key, patch)
      } catch (err) {
        errors[f.key] = (err as Error).message
      }
    }
    this.errors = errors
    return Object.keys(errors).length ? null : body
  }

  private async save() {
    const body = this.body()
    if (!body) return
    if (!Object.keys(body).length) {
      this.message = {kind: 'ok', text: 'Nothing changed.'}
      return
    }
    if (this.name && this.meta) body.revisions = {[this.name]: this.meta.revision}
    this.busy = true
    try {
      const r = await api<{sections: Record<string, {status: string; revision: number}>; reload?: {requires_restart: boolean}; notices?: string[]}>('PUT', '/api/v1/admin/server-config', body)
      const rev = this.name ? r.sections?.[this.name]?.revision : undefined
      const restart = r.reload?.requires_restart ? ' Takes effect when the Hub restarts.' : ''
      const notices = r.notices?.length ? ` ${r.notices.join(' ')}` : ''
      this.edits = {}
      this.dispatchEvent(new CustomEvent('settings-reload', {bubbles: true, composed: true}))
      // The shell reads its status again: the header shows a newly saved server.hub.hub_name.
      this.dispatchEvent(new CustomEvent('svc-status-changed', {bubbles: true, composed: true}))
      this.message = {kind: 'ok', text: `Saved${rev !== undefined ? ` (revision ${rev})` : ''}.${restart}${notices}`}
    } catch (err) {
      this.showError(err)
    } finally {
      this.busy = false
    }
  }

  private showError(err: unknown) {
    if (!(err instanceof ApiError)) {
      this.message = {kind: 'error', text: String(err)}
      return
    }
    if (err.code === 'revision_conflict') {
      this.conflict = true
      this.message = {kind: 'error', text: `Someone else changed this section since you loaded it (revision ${err.details.current ?? '?'}, you had ${err.details.expected ?? '?'}). Nothing was saved.`}
      return
    }
    const perSection = (err.details.sections ?? {}) as Record<string, Array<{key: string; message: string}>>
    const errors: Record<string, string> = {}
    for (const list of Object.values(perSection)) for (const e of list) errors[e.key] = e.message
    const keys = (err.details.keys ?? (err.details.key ? [err.details.key] : [])) as string[]
    for (const k of keys) errors[k] ??= err.message
    this.errors = errors
    this.message = {kind: 'error', text: err.message}
  }

  private async reset() {
    this.confirmReset = false
    this.busy = true
    try {
      await api('DELETE', `/api/v1/admin/server-config/sections/${encodeURIComponent(this.name!)}`)
      this.edits = {}
      this.errors = {}
      this.dispatchEvent(new CustomEvent('settings-reload', {bubbles: true, composed: true}))
      this.message = {kind: 'ok', text: 'Reset to bootstrap: the section follows the deployment again.'}
    } catch (err) {
      this.showError(err)
    } finally {
      this.busy = false
    }
  }

  private onInput(e: CustomEvent<{key: string; raw: string | boolean}>) {
    this.edits = {...this.edits, [e.detail.key]: e.detail.raw}
    this.message = null
  }

  private metaList() {
    const m = this.meta
    if (!m) return ''
    return html`
      <dl>
        <dt>Origin</dt><dd data-meta="origin">${m.origin}</dd>
        <dt>Source</dt><dd data-meta="source">${m.source}</dd>
        <dt>Revision</dt><dd data-meta="revision">${m.revision}</dd>
        <dt>Last update</dt><dd data-meta="updated">${m.updated_at ? `${m.updated_at} by ${m.updated_by ?? 'unknown'}` : 'never'}</dd>
      </dl>
      <p class="muted" data-meta="origin-text">${ORIGIN_TEXT[m.origin] ?? ''}</p>
      ${m.superseded ? html`<p class="notice" role="note" data-meta="superseded">Superseded: the deployment's bootstrap value for this section differs from the value saved here, which wins. Reset to bootstrap to follow the deployment again.</p>` : ''}
    `
  }

  override render() {
    const title = this.bootstrap ? 'Bootstrap settings (Layer 0)' : this.name
    const headingId = `h-${this.name ?? 'bootstrap'}`
    const saveLabel = this.bootstrap ? 'Save bootstrap settings' : `Save ${this.name}`
    const editable = this.fields.some((f) => !this.locked(f))
    return html`<section aria-labelledby=${headingId} @field-input=${this.onInput}>
      <h3 id=${headingId} tabindex="-1">${title}</h3>
      ${this.bootstrap
        ? html`<p class="muted">${this.layer0Editable ? 'Written to the settings file; each takes effect when the Hub restarts.' : 'Set by the deployment (settings file and environment); read-only on a hosted Hub.'}</p>`
        : this.metaList()}
      ${this.fields.length ? '' : html`<p class="muted">No keys of this section are set; it has no fields to edit here.</p>`}
      ${this.fields.map(
        (f) => html`<svc-field data-key=${f.key} .field=${f} .value=${getIn(this.view, f.key)} .raw=${this.edits[f.key]} .error=${this.errors[f.key] ?? ''} ?locked=${this.locked(f)} .note=${this.noteOf(f)}></svc-field>`,
      )}
      ${this.message ? html`<p class="notice ${this.message.kind}" role=${this.message.kind === 'error' ? 'alert' : 'status'} data-role="message">${this.message.text}</p>` : ''}
      <div class="row actions">
        ${this.conflict ? html`<button class="primary" @click=${this.reload}>Reload section</button>` : ''}
        ${editable ? html`<button class="primary" ?disabled=${this.busy || this.conflict} @click=${this.save}>${saveLabel}</button>` : ''}
        ${!this.bootstrap && this.canWrite && this.meta && this.meta.revision > 0
          ? this.confirmReset
            ? html`<span>Delete the saved section and follow the deployment?</span>
                <button @click=${this.reset} ?disabled=${this.busy}>Confirm reset of ${this.name}</button>
                <button @click=${() => (this.confirmReset = false)}>Cancel</button>`
            : html`<button @click=${() => (this.confirmReset = true)} aria-label=${`Reset ${this.name} to bootstrap`}>Reset to bootstrap</button>`
          : ''}
      </div>
    </section>`
  }
}
customElements.define('svc-settings-section', SvcSettingsSection)
