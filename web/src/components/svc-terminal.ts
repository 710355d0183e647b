import {LitElement, html, css, unsafeCSS} from 'lit'
import {Terminal} from '@xterm/xterm'
import xtermCss from '@xterm/xterm/css/xterm.css?inline'
import {wsUrl} from '../api.js'
import {shared} from '../styles.js'

/** The size of agent panes (src/domain/agents/screen-render.ts PANE_SIZE): what a log replays at. */
export const PANE_SIZE = {cols: 200, rows: 50}

/**
 * xterm.js writes its theme and cell metrics into <style> elements, which the page's
 * Content-Security-Policy (`style-src 'self'`) refuses to apply. Their text is mirrored into
 * constructed stylesheets of the shadow root (allowed, as for Lit's own styles), kept in step.
 */
function mirrorInlineStyles(root: ShadowRoot): MutationObserver {
  const base = [...root.adoptedStyleSheets]
  let sheets = new Map<HTMLStyleElement, CSSStyleSheet>()
  const sync = () => {
    const next = new Map<HTMLStyleElement, CSSStyleSheet>()
    for (const el of root.querySelectorAll('style')) {
      const sheet = sheets.get(el) ?? new CSSStyleSheet()
      sheet.replaceSync(el.textContent ?? '')
      next.set(el, sheet)
    }
    sheets = next
    root.adoptedStyleSheets = [...base, ...sheets.values()]
  }
  const observer = new MutationObserver(sync)
  observer.observe(root, {subtree: true, childList: true, characterData: true})
  return observer
}

/**
 * A WebSocket terminal stream of an agent, drawn by a terminal emulator (xterm.js): `attach`
 * (interactive: keys typed in the focused terminal, or a line sent from the input box) or
 * `logs` (follow, read-only). Binary frames carry terminal bytes; text frames are JSON control
 * messages (docs/api.md, WebSocket framing). `cols`/`rows` are the emulator's size: an attach
 * asks the pane for it, a log is drawn at the pane's size so cursor moves land where they did.
 */
export class SvcTerminal extends LitElement {
  static properties = {src: {}, interactive: {type: Boolean}, label: {}, cols: {type: Number}, rows: {type: Number}, state: {state: true}, line: {state: true}}
  static styles = [
    shared,
    // xterm's own stylesheet, inside this shadow root (a document stylesheet would not reach it).
    unsafeCSS(xtermCss),
    css`
      .frame { background: #10151b; padding: .4rem; margin: .25rem 0; overflow: auto; max-height: 40rem; border-radius: 4px; }
      .frame:focus-within { outline: 2px solid #6ea8ff; }
      .xterm .xterm-viewport { background: #10151b !important; }
    `,
  ]
  declare src: string
  declare interactive: boolean
  declare label: string
  declare cols: number
  declare rows: number
  declare state: string
  declare line: string
  private socket: WebSocket | null = null
  private term: Terminal | null = null
  private styles: MutationObserver | null = null

  constructor() {
    super()
    this.src = ''
    this.interactive = false
    this.label = 'Terminal'
    this.cols = PANE_SIZE.cols
    this.rows = PANE_SIZE.rows
    this.state = 'connecting'
    this.line = ''
  }

  /** The emulator's lines (scrollback and screen), for tests and copying. */
  screenText(): string {
    const b = this.term?.buffer.active
    if (!b) return ''
    const out: string[] = []
    for (let i = 0; i < b.length; i++) out.push(b.getLine(i)?.translateToString(true) ?? '')
    return out.join('\n').replace(/\s+$/, '')
  }

  override firstUpdated() {
    const term = new Terminal({
      cols: this.cols,
      rows: this.rows,
      scrollback: 5000,
      fontSize: 12,
      fontFamily: 'ui-monospace, "DejaVu Sans Mono", monospace',
      disableStdin: !this.interactive,
      cursorBlink: this.interactive,
      screenReaderMode: false,
      theme: {background: '#10151b', foreground: '#d9e1e8'},
    })
    this.term = term
    this.styles = mirrorInlineStyles(this.renderRoot as ShadowRoot)
    term.open(this.renderRoot.querySelector('.screen') as HTMLElement)
    term.textarea?.setAttribute('aria-label', this.label)
    // Tab is left to the browser (keyboard users move on with it); Ctrl+I sends a tab.
    term.attachCustomKeyEventHandler((e) => !(e.key === 'Tab' && !e.ctrlKey && !e.altKey && !e.metaKey))
    if (this.interactive) term.onData((data) => this.send(data))
    this.connect()
  }

  private connect() {
    const ws = new WebSocket(wsUrl(this.src))
    ws.binaryType = 'arraybuffer'
    this.socket = ws
    ws.onopen = () => {
      this.state = 'connected'
      if (this.interactive) ws.send(JSON.stringify({type: 'resize', cols: this.cols, rows: this.rows}))
    }
    ws.onmessage = (e) => {
      if (typeof e.data === 'string') {
        try {
          const msg = JSON.parse(e.data)
          if (msg.type === 'error') this.state = `error: ${msg.message}`
        } catch {
          // not a control message
        }
        return
      }
      this.term?.write(new Uint8Array(e.data as ArrayBuffer))
    }
    ws.onclose = (e) => {
      if (!this.state.startsWith('error')) this.state = e.reason ? `closed: ${e.reason}` : 'closed'
    }
  }

  override disconnectedCallback() {
    this.socket?.close()
    this.term?.dispose()
    this.term = null
    this.styles?.disconnect()
    super.disconnectedCallback()
  }

  private send(data: string) {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({type: 'input', data}))
  }

  override render() {
    return html`
      <p class="muted" role="status" data-role="state">${this.label}: ${this.state}</p>
      <div class="frame" role="region" aria-label=${this.label}><div class="screen"></div></div>
      ${this.interactive
        ? html`<form class="row" @submit=${(e: Event) => {
            e.preventDefault()
            this.send(`${this.line}\r`)
            this.line = ''
          }}>
            <label for="line">Send a line</label>
            <input id="line" type="text" class="grow" .value=${this.line} @input=${(e: Event) => (this.line = (e.target as HTMLInputElement).value)}>
            <button type="submit">Send</button>
          </form>`
        : ''}
    `
  }
}
customElements.define('svc-terminal', SvcTerminal)
