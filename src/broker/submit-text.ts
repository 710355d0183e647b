/**
 * Typing a message into an agent's terminal and submitting it, on any runtime.
 *
 * TUIs take an Enter that arrives together with a paste as a newline in their input box, not as
 * "submit" (Gemini CLI: any Enter within 40 ms of a paste). A fixed pause between the paste and
 * the Enter is not enough: a harness starved of CPU (a loaded machine, `nice`, a resumed session
 * still drawing its history) reads both from its terminal in one go, and the message sits unsent
 * in its input box. So the Enter waits until the terminal shows the paste was taken in, then a
 * settle for the harness's own paste guard: 300 ms, plus twice the time the harness took to
 * show the paste. Gemini's guard goes down only after a timer, another render and its effect;
 * a harness slow to draw now is slow to do that too (seen in CI: a fixed 300 ms after the paste
 * showed still lost the message).
 */
import type {Runtime, RuntimeHandle} from './runtime.js'

export interface SubmitTiming {
  /** Longest wait for the paste to show on the screen; then Enter goes anyway. */
  landedMs: number
  /** How often the screen is looked at while waiting. */
  pollMs: number
  /** Pause after the paste shows (or, without a screen to look at, after the paste), before the time it took to show is added twice. */
  settleMs: number
}

export const SUBMIT_TIMING: SubmitTiming = {landedMs: 10_000, pollMs: 50, settleMs: 300}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Pastes `text` into the agent's terminal, then presses Enter (unless `noEnter`) once the paste has landed. */
export async function submitText(runtime: Runtime, handle: RuntimeHandle, text: string, opts: {noEnter?: boolean} = {}, timing: SubmitTiming = SUBMIT_TIMING): Promise<void> {
  const watch = text !== '' && !opts.noEnter && runtime.capture !== undefined
  const before = watch ? await screen(runtime, handle) : undefined
  const pastedAt = Date.now()
  await runtime.paste(handle, text, {noEnter: true})
  if (opts.noEnter) return
  if (text !== '') {
    const shownAt = before === undefined ? null : await screenChanged(runtime, handle, before, timing)
    // A paste never shown (a program that does not echo it) adds nothing: the wait was long enough.
    await sleep(timing.settleMs + (shownAt === null ? 0 : Math.min(2 * (shownAt - pastedAt), timing.landedMs)))
  }
  await runtime.sendKeys(handle, {key: 'Enter'})
}

/** The terminal's visible text, or undefined when it cannot be read (the Enter then only waits the settle). */
async function screen(runtime: Runtime, handle: RuntimeHandle): Promise<string | undefined> {
  return runtime.capture!(handle).catch(() => undefined)
}

/** Resolves the time the screen differed from `before`; null when it did not within the wait (or cannot be read). */
async function screenChanged(runtime: Runtime, handle: RuntimeHandle, before: string, timing: SubmitTiming): Promise<number | null> {
  const deadline = Date.now() + timing.landedMs
  while (Date.now() < deadline) {
    const now = await screen(runtime, handle)
    if (now === undefined) return null
    if (now !== before) return Date.now()
    await sleep(timing.pollMs)
  }
  return null
}
