import {LitElement, html, type PropertyDeclarations, type TemplateResult} from 'lit'
import {markReady} from '../readiness.js'

export type Note = {kind: 'ok' | 'error'; text: string} | null

/**
 * Base of the views that load their data from the Hub: `fetchData` on connect (and `load()`
 * again after a change), the failure shown as an alert, the readiness mark once the data is on
 * screen, and `act` for buttons (busy while it runs, its outcome as a note).
 */
export abstract class LoadedView<T> extends LitElement {
  static properties: PropertyDeclarations = {data: {state: true}, failure: {state: true}, note: {state: true}, busy: {state: true}}
  declare data: T | null
  declare failure: string
  declare note: Note
  declare busy: boolean
  /** The readiness mark's name (`svc:<view>:ready`). */
  protected abstract readonly view: string
  protected abstract fetchData(): Promise<T>

  constructor() {
    super()
    this.data = null
    this.failure = ''
    this.note = null
    this.busy = false
  }

  override connectedCallback() {
    super.connectedCallback()
    void this.load()
  }

  async load(): Promise<void> {
    try {
      this.data = await this.fetchData()
      this.failure = ''
      await this.updateComplete
      void markReady(this.view)
    } catch (err) {
      this.failure = (err as Error).message
    }
  }

  /** Runs a button's action; `done` gives the note shown after it succeeds. */
  protected async act(fn: () => Promise<string>) {
    this.busy = true
    try {
      this.note = {kind: 'ok', text: await fn()}
    } catch (err) {
      this.note = {kind: 'error', text: (err as Error).message}
    } finally {
      this.busy = false
    }
  }

  /** The failure alert, or the loading line while there is no data yet; null once loaded. */
  protected pending(loading: string): TemplateResult | null {
    if (this.failure) return html`<p class="notice error" role="alert">${this.failure}</p>`
    if (this.data === null) return html`<p class="muted" role="status">${loading}</p>`
    return null
  }

  protected noteView() {
    const n = this.note
    return n ? html`<p class="notice ${n.kind}" role=${n.kind === 'error' ? 'alert' : 'status'}>${n.text}</p>` : ''
  }
}
