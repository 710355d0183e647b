/**
 * An interactive terminal without a PTY: a tmux control-mode client (`tmux -C attach-session`)
 * over any byte channel — a local child process, `docker exec -i`, or a Kubernetes exec stream.
 * Pane output arrives as `%output` notifications (octal-escaped) and input goes back as
 * `send-keys -H`, so control characters (\r, \x03) reach the harness exactly as typed.
 */
import type {ChildProcess} from 'node:child_process'
import type {TerminalStream} from '../runtime.js'
import {hexKeyCommands} from './tmux-args.js'

/** The two ends of a control-mode client: its stdin and stdout. */
export interface ByteChannel {
  write(data: string): void
  onData(listener: (chunk: Buffer) => void): void
  onClose(listener: () => void): void
  /** Closes the client's stdin (tmux exits on EOF). */
  end(): void
  /** Forcibly ends the client (never the session). */
  kill(): void
}

/** Decodes tmux's control-mode escaping: bytes below 0x20 and `\` arrive as `\ooo`. */
export function decodeOctal(data: Buffer): Buffer {
  const out = Buffer.allocUnsafe(data.length)
  let n = 0
  for (let i = 0; i < data.length; i++) {
    const b = data[i]
    if (b === 0x5c && isOctal(data[i + 1]) && isOctal(data[i + 2]) && isOctal(data[i + 3])) {
      out[n++] = ((data[i + 1] - 0x30) << 6) | ((data[i + 2] - 0x30) << 3) | (data[i + 3] - 0x30)
      i += 3
    } else {
      out[n++] = b
    }
  }
  return out.subarray(0, n)
}

function isOctal(b: number | undefined): boolean {
  return b !== undefined && b >= 0x30 && b <= 0x37
}

/** Rebuilds the visible screen for a fresh viewer: clear, the captured lines, then the cursor. */
export function renderScreen(lines: string[], cursorX: number, cursorY: number, cursorVisible: boolean): Buffer {
  const body = lines.join('\r\n')
  const cursor = `\x1b[${cursorY + 1};${cursorX + 1}H${cursorVisible ? '\x1b[?25h' : '\x1b[?25l'}`
  return Buffer.from(`\x1b[0m\x1b[H\x1b[2J${body}\x1b[0m${cursor}`, 'utf8')
}

interface Pending {
  resolve(lines: Buffer[]): void
  reject(err: Error): void
}

const PREFIX_OUTPUT = Buffer.from('%output ')

/**
 * A TerminalStream over a control-mode client. Call `start()` once: it sizes the client,
 * captures the current screen (emitted first, prefixed by clear-screen) and from then on
 * forwards the pane's output.
 */
export class ControlModeTerminal implements TerminalStream {
  private buf: Buffer = Buffer.alloc(0)
  private pending: Pending[] = []
  /** The reply block being read; `mine` is false for blocks of commands we did not send. */
  private block: {id: string; mine: boolean; lines: Buffer[]} | undefined
  private paneId: string | undefined
  /** Output parsed before the screen capture is already part of it: dropped until then. */
  private live = false
  private closed = false
  private dataListeners: Array<(c: Buffer) => void> = []
  private closeListeners: Array<() => void> = []
  private queued: Buffer[] = []
  private attachedResolve!: () => void
  private attachedReject!: (e: Error) => void
  /** Settles when tmux reports the client attached (`%session-changed`) or the attach failed. */
  private readonly attached = new Promise<void>((resolve, reject) => {
    this.attachedResolve = resolve
    this.attachedReject = reject
  })

  constructor(
    private readonly channel: ByteChannel,
    private readonly target: string,
  ) {
    // Awaited in start(); this keeps an attach failure that nobody awaits from being unhandled.
    this.attached.catch(() => {})
    channel.onData((chunk) => this.feed(chunk))
    channel.onClose(() => this.finish())
  }

  async start(cols: number, rows: number): Promise<void> {
    // Commands sent before the client is attached fail with "no current client".
    await this.attached
    await this.command(`refresh-client -C ${size(cols)}x${size(rows)}`)
    // One line, two commands: tmux runs them back to back, so no output slips between the
    // cursor position and the capture.
    const [info, screen] = await this.commands(
      `display-message -p -t ${this.target} "#{pane_id} #{cursor_x} #{cursor_y} #{cursor_flag}" ; capture-pane -p -e -t ${this.target}`,
      2,
    )
    const [paneId, x, y, flag] = (info[0] ?? Buffer.alloc(0)).toString('utf8').trim().split(' ')
    this.paneId = paneId
    // A pane taller than the viewer (its size is kept by another client) shows its bottom part,
    // where the cursor usually is, rather than scrolling the viewer.
    const drop = Math.max(0, screen.length - rows)
    const lines = screen.slice(drop).map((l) => l.toString('utf8'))
    this.emit(renderScreen(lines, Number(x) || 0, Math.max(0, (Number(y) || 0) - drop), flag !== '0'))
    this.live = true
  }

  onData(listener: (chunk: Buffer) => void): void {
    this.dataListeners.push(listener)
    // The first listener receives what arrived before it (the initial screen at least).
    const queued = this.queued
    this.queued = []
    for (const c of queued) listener(c)
  }

  onClose(listener: () => void): void {
    if (this.closed) queueMicrotask(listener)
    else this.closeListeners.push(listener)
  }

  async write(data: Buffer): Promise<void> {
    if (data.length === 0) return
    const lines = hexKeyCommands(this.target, data)
    await Promise.all(lines.map((l) => this.command(l)))
  }

  async resize(cols: number, rows: number): Promise<void> {
    await this.command(`refresh-client -C ${size(cols)}x${size(rows)}`)
  }

  /** Detaches this client; the session keeps running. */
  async close(): Promise<void> {
    if (this.closed) return
    const done = new Promise<void>((resolve) => this.onClose(resolve))
    try {
      this.channel.write('detach-client\n')
      this.channel.end()
    } catch {
      // Already gone: the close listener fires anyway.
    }
    const timer = setTimeout(() => this.channel.kill(), 2000)
    await done
    clearTimeout(timer)
  }

  private command(line: string): Promise<Buffer[]> {
    return this.commands(line, 1).then((r) => r[0])
  }

  /** Sends one line that holds `count` commands; resolves with each command's reply lines. */
  private commands(line: string, count: number): Promise<Buffer[][]> {
    if (this.closed) return Promise.reject(new Error('the terminal is closed'))
    const replies = Array.from({length: count}, () => new Promise<Buffer[]>((resolve, reject) => this.pending.push({resolve, reject})))
    this.channel.write(`${line}\n`)
    return Promise.all(replies)
  }

  private feed(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk
    let nl: number
    while ((nl = this.buf.indexOf(0x0a)) >= 0) {
      const line = this.buf.subarray(0, nl)
      this.buf = this.buf.subarray(nl + 1)
      this.line(line)
    }
  }

  private line(line: Buffer): void {
    if (this.block) {
      const text = line.subarray(0, 64).toString('latin1')
      const m = /^%(end|error) (\S+ \S+) \S+$/.exec(text)
      if (m && m[2] === this.block.id) {
        const lines = this.block.lines
        const mine = this.block.mine
        this.block = undefined
        if (!mine) {
          // The attach-session command itself: its error is why the client cannot attach.
          if (m[1] === 'error') this.attachedReject(new Error(`tmux: ${Buffer.concat(lines).toString('utf8').trim() || 'attach failed'}`))
          return
        }
        const p = this.pending.shift()
        if (!p) return
        if (m[1] === 'end') p.resolve(lines)
        else p.reject(new Error(`tmux: ${Buffer.concat(lines).toString('utf8').trim() || 'command failed'}`))
        return
      }
      this.block.lines.push(Buffer.from(line))
      return
    }
    if (line.subarray(0, PREFIX_OUTPUT.length).equals(PREFIX_OUTPUT)) {
      const rest = line.subarray(PREFIX_OUTPUT.length)
      const sp = rest.indexOf(0x20)
      if (sp < 0) return
      const pane = rest.subarray(0, sp).toString('latin1')
      if (!this.live || pane !== this.paneId) return
      this.emit(decodeOctal(rest.subarray(sp + 1)))
      return
    }
    const text = line.subarray(0, 64).toString('latin1')
    // Only blocks answering our own commands (flags 1) are tracked; the attach itself is flags 0.
    const begin = /^%begin (\S+ \S+) (\S+)$/.exec(text)
    if (begin) {
      this.block = {id: begin[1], mine: begin[2] === '1', lines: []}
      return
    }
    if (text.startsWith('%session-changed')) this.attachedResolve()
    else if (text.startsWith('%exit')) this.finish()
  }

  private emit(chunk: Buffer): void {
    if (chunk.length === 0) return
    if (this.dataListeners.length === 0) this.queued.push(chunk)
    else for (const l of this.dataListeners) l(chunk)
  }

  private finish(): void {
    if (this.closed) return
    this.closed = true
    this.attachedReject(new Error('the tmux client ended before it was attached'))
    for (const p of this.pending.splice(0)) p.reject(new Error('the terminal closed before tmux answered'))
    for (const l of this.closeListeners.splice(0)) l()
  }
}

function size(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > 10000) throw new Error(`terminal size ${n} is out of range (1..10000)`)
  return n
}

/** A child process as the byte channel of a control-mode client. */
export function childChannel(child: ChildProcess): ByteChannel {
  const closeListeners: Array<() => void> = []
  let closed = false
  const fire = () => {
    if (closed) return
    closed = true
    for (const l of closeListeners) l()
  }
  child.on('close', fire)
  child.on('error', fire)
  child.stdin?.on('error', () => {})
  return {
    write: (data) => {
      if (!closed && child.stdin?.writable) child.stdin.write(data)
    },
    onData: (l) => child.stdout?.on('data', l),
    onClose: (l) => {
      if (closed) queueMicrotask(l)
      else closeListeners.push(l)
    },
    end: () => child.stdin?.end(),
    kill: () => {
      if (!closed) child.kill('SIGKILL')
    },
  }
}
