/**
 * A harness's raw terminal output as the text a person saw: the bytes are fed through a headless
 * terminal emulator (@xterm/headless) of the pane's size, and the result is its lines (scrollback,
 * then the screen), trailing blanks trimmed. Cursor moves, redraws and spinners come out as the
 * final screen, not as debris (`Do you want to proceed?`, not `Doyouwanttoproceed?`).
 *
 * Used by `GET .../logs` (and so `svc agent logs`, `--json` and the web's archived log pane) and
 * by `svc agent logs --follow` when its output is not a terminal.
 */
import xtermHeadless from '@xterm/headless'

// CommonJS package: a default import, then the class (Node's named-export detection misses it).
const {Terminal} = xtermHeadless

/**
 * The pane size of agent sessions: every runtime starts its tmux session at 200x50 unless its
 * settings say otherwise (local-tmux.ts, container-cli.ts, kubernetes.ts). An attach may resize
 * the pane later; output written at a smaller width still renders, only narrower.
 */
export const PANE_SIZE = {cols: 200, rows: 50} as const

/** Lines kept above the screen: more than an archived log (MAX_ARCHIVE_BYTES) usually fills. */
const SCROLLBACK = 20_000

type HeadlessTerminal = InstanceType<typeof Terminal>
type Buffer = HeadlessTerminal['buffer']['active']

/** The lines of a buffer from `from`; a soft-wrapped line is joined to the line it continues. */
function linesOf(buffer: Buffer, from = 0): string[] {
  const out: string[] = []
  for (let i = from; i < buffer.length; i++) {
    const line = buffer.getLine(i)
    if (!line) continue
    const text = line.translateToString(true)
    if (line.isWrapped && out.length) out[out.length - 1] += text
    else out.push(text)
  }
  return out
}

function trimTrailingBlank(lines: string[]): string[] {
  let end = lines.length
  while (end > 0 && lines[end - 1].trim() === '') end--
  return lines.slice(0, end).map((l) => l.replace(/\s+$/, ''))
}

/**
 * A headless terminal fed chunk by chunk. `text()` is everything it holds; `takeFinal()` hands
 * out, once each, the lines that scrolled off the screen (they can no longer change), for a
 * follower that prints lines as they become final.
 */
export class ScreenRenderer {
  private readonly term: HeadlessTerminal
  private pending: Promise<void> = Promise.resolve()

  constructor(size: {cols: number; rows: number} = PANE_SIZE) {
    this.term = new Terminal({cols: size.cols, rows: size.rows, scrollback: SCROLLBACK, allowProposedApi: true, convertEol: false})
  }

  /** Feeds bytes (or text); resolves once the emulator has parsed them. */
  write(data: string | Uint8Array): Promise<void> {
    this.pending = new Promise((resolve) => this.term.write(data, resolve))
    return this.pending
  }

  /** Resolves once everything written so far is parsed. */
  settled(): Promise<void> {
    return this.pending
  }

  /**
   * Scrollback and screen as lines, trailing blanks trimmed. A full-screen program on the
   * alternate screen: the normal buffer's lines, then the alternate screen it shows.
   */
  lines(): string[] {
    const b = this.term.buffer
    const normal = linesOf(b.normal)
    if (b.active.type !== 'alternate') return trimTrailingBlank(normal)
    return trimTrailingBlank([...trimTrailingBlank(normal), ...linesOf(b.alternate)])
  }

  text(): string {
    return this.lines().join('\n')
  }

  /**
   * Lines that left the screen since the last call (final: nothing redraws them). They are then
   * erased from the scrollback (ED 3, queued behind what was written), so a long stream never
   * reaches the scrollback's cap, where lines would fall off uncounted.
   */
  async takeFinal(): Promise<string[]> {
    const b = this.term.buffer.normal
    const out: string[] = []
    for (let i = 0; i < b.baseY; i++) {
      const line = b.getLine(i)
      if (!line) continue
      const text = line.translateToString(true).replace(/\s+$/, '')
      if (line.isWrapped && out.length) out[out.length - 1] += text
      else out.push(text)
    }
    if (b.baseY > 0) await this.write('\x1b[3J')
    return out
  }

  /** The screen (what takeFinal has not handed out), trailing blanks trimmed: the end of a stream. */
  rest(): string[] {
    const b = this.term.buffer
    return trimTrailingBlank(b.active.type === 'alternate' ? linesOf(b.alternate) : linesOf(b.normal))
  }

  dispose() {
    this.term.dispose()
  }
}

/** Raw terminal output rendered to its text (see the file comment). */
export async function renderScreen(raw: string | Uint8Array, size: {cols: number; rows: number} = PANE_SIZE): Promise<string> {
  const r = new ScreenRenderer(size)
  try {
    await r.write(raw)
    return r.text()
  } finally {
    r.dispose()
  }
}
