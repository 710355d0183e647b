import {LitElement, html, css} from 'lit'
import type {LayoutField} from '../../../src/api/settings-layout.js'
import {display} from '../field-values.js'
import {shared} from '../styles.js'

export type {LayoutField}

const SECRET = /secret|token|password/i

/**
 * One labelled settings field. Fires `field-input` with {key, raw} as the user edits; shows its
 * error (from the page or the Hub's 400/422) under the input, tied by aria-describedby.
 */
export class SvcField extends LitElement {
  static properties = {field: {attribute: false}, value: {attribute: false}, raw: {attribute: false}, error: {}, locked: {type: Boolean}, note: {}}
  static styles = [
    shared,
    css`
      :host { display: grid; grid-template-columns: 18rem 1fr; gap: .5rem; padding: .35rem 0; border-bottom: 1px dashed #e3e7eb; }
      label { font-family: ui-monospace, monospace; font-size: 12px; word-break: break-all; }
      .doc { font-size: 12px; color: #55606b; margin-top: .2rem; }
      .field-error { color: #8a1c1c; font-size: 12px; margin-top: .2rem; }
      .tag { display: inline-block; font-size: 11px; padding: 0 .35rem; border-radius: 3px; background: #fff4d6; border: 1px solid #e6cf8a; margin-left: .35rem; }
      input[type='text'], input[type='number'], input[type='password'], select { min-width: 18rem; }
    `,
  ]
  declare field: LayoutField
  declare value: unknown
  declare raw: string | boolean | undefined
  declare error: string
  declare locked: boolean
  declare note: string

  constructor() {
    super()
    this.error = ''
    this.locked = false
    this.note = ''
  }

  private emit(raw: string | boolean) {
    this.dispatchEvent(new CustomEvent('field-input', {detail: {key: this.field.key, raw}, bubbles: true, composed: true}))
  }

  private input() {
    const f = this.field
    const id = 'input'
    const ro = this.locked || f.readOnly
    const described = `doc${this.error ? ' err' : ''}`
    const text = this.raw === undefined ? display(f, this.value) : String(this.raw)
    if (f.kind === 'bool') {
      const checked = this.raw === undefined ? this.value === true : this.raw === true
      return html`<input id=${id} type="checkbox" .checked=${checked} ?disabled=${ro} aria-describedby=${described} aria-invalid=${this.error ? 'true' : 'false'} @change=${(e: Event) => this.emit((e.target as HTMLInputElement).checked)}>`
    }
    if (f.options && !ro) {
      return html`<select id=${id} aria-describedby=${described} @change=${(e: Event) => this.emit((e.target as HTMLSelectElement).value)}>
        ${f.options.map((o) => html`<option value=${o} ?selected=${o === text}>${o}</option>`)}
      </select>`
    }
    if (f.kind === 'json') {
      return html`<textarea id=${id} rows=${Math.min(8, Math.max(2, text.split('\n').length))} ?readonly=${ro} aria-describedby=${described} aria-invalid=${this.error ? 'true' : 'false'} .value=${text} @input=${(e: Event) => this.emit((e.target as HTMLTextAreaElement).value)}></textarea>`
    }
    const type = f.kind === 'int' || f.kind === 'float' ? 'number' : SECRET.test(f.key) ? 'password' : 'text'
    return html`<input id=${id} type=${type} step=${f.kind === 'float' ? 'any' : '1'} ?readonly=${ro} aria-describedby=${described} aria-invalid=${this.error ? 'true' : 'false'} .value=${text} @input=${(e: Event) => this.emit((e.target as HTMLInputElement).value)}>`
  }

  override render() {
    const f = this.field
    return html`
      <label for="input">${f.key}${f.readOnly ? html`<span class="tag">read-only</span>` : ''}${this.note ? html`<span class="tag">${this.note}</span>` : ''}</label>
      <div>
        ${this.input()}
        <div class="doc" id="doc">${f.doc}</div>
        ${this.error ? html`<div class="field-error" id="err" role="alert">${this.error}</div>` : ''}
      </div>
    `
  }
}
customElements.define('svc-field', SvcField)
