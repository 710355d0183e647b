import {LitElement, html, css} from 'lit'
import {wsUrl} from '../api.js'
import {shared} from '../styles.js'
import {tail, terminalText} from '../terminal-text.js'

// Tab is left to the browser (keyboard users move on with it); Ctrl+I sends a tab to the agent.
const KEYS: Record<string, string> = {Enter: '\r', Backspace: '\x7f', Escape: '\x1b', ArrowUp: '\x1b[A', ArrowDown: '\x1b[B', ArrowRight: '\x1b[C', ArrowLeft: '\x1b[D'}

/**
 * A WebSocket terminal stream of an agent: `attach` (interactive: keys typed in the focused
 * output, or a line sent from the input box) or `logs` (follow, read-only). Binary frames carry
 * terminal bytes; text frames are JSON control messages (docs/api.md, WebSocket framing).
 */
export class SvcTerminal extends LitElement {
  static properties = {src: {}, interactive: {type: Boolean}, label: {}, text: {state: true}, state: {state: true}, line: {state: true}}
  static styles = [
    shared,
    css`
      pre { background: #10151b; color: #d9e1e8; padding: .6rem; min-height: 12rem; max-height: 28rem; overflow: auto; white-space: pre-wrap; font: 12px/1.35 ui-monospace, monospace; margin: .25rem 0; }
      pre:focus-visible { outline: 2px solid #6ea8ff; }
    `,
  ]
  declare src: string
  declare interactive: boolean
  declare label: string
  declare text: string
  declare state: string
  declare line: string
  private raw = ''
  private socket: WebSocket | null = null
  private decoder = new TextDecoder()

  constructor() {
    super()
    this.src = ''
    this.interactive = false
    this.label = 'Terminal'
    this.text = ''
    this.state = 'connecting'
    this.line = ''
  }

  override connectedCallback() {
    super.connectedCallback()
    const ws = new WebSocket(wsUrl(this.src))
    ws.binaryType = 'arraybuffer'
    this.socket = ws
    ws.onopen = () => {
      this.state = 'connected'
      if (this.interactive) ws.send(JSON.stringify({type: 'resize', cols: 120, rows: 32}))
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
      this.raw = tail(this.raw + this.decoder.decode(e.data as ArrayBuffer, {stream: true}))
      this.text = terminalText(this.raw)
      void this.updateComplete.then(() => {
        const pre = this.renderRoot.querySelector('pre')
        if (pre) pre.scrollTop = pre.scrollHeight
      })
    }
    ws.onclose = (e) => {
      if (!this.state.startsWith('error')) this.state = e.reason ? `closed: ${e.reason}` : 'closed'
    }
  }

  override disconnectedCallback() {
    this.socket?.close()
    super.disconnectedCallback()
  }

  private send(data: string) {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({type: 'input', data}))
  }

  private onKey(e: KeyboardEvent) {
    if (!this.interactive || e.metaKey || e.altKey) return
    let data = KEYS[e.key]
    if (!data && e.ctrlKey && /^[a-z]$/i.test(e.key)) data = String.fromCharCode(e.key.toUpperCase().charCodeAt(0) - 64)
    if (!data && e.key.length === 1 && !e.ctrlKey) data = e.key
    if (!data) return
    e.preventDefault()
    this.send(data)
  }

  override render() {
    return html`
      <p class="muted" role="status" data-role="state">${this.label}: ${this.state}</p>
      <pre tabindex="0" aria-label=${this.label} aria-live="off" @keydown=${this.onKey}>${this.text}</pre>
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
