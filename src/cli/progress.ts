import type {Progress} from '../client/transfer.js'

/** Files at least this large get a progress bar (on a TTY). */
export const PROGRESS_MIN_BYTES = 4 * 1024 * 1024

const mib = (n: number) => (n / 1024 / 1024).toFixed(1)

/**
 * A one-line progress bar on stderr, only when stderr is a TTY and the transfer is large;
 * otherwise undefined (nothing is drawn). `done()` clears the line.
 */
export function progressBar(label: string, total: number, stream: NodeJS.WriteStream = process.stderr): {onProgress?: Progress; done: () => void} {
  if (!stream.isTTY || total < PROGRESS_MIN_BYTES) return {done: () => {}}
  let last = -1
  const onProgress: Progress = (n, t) => {
    const of = t ?? total
    const pct = of ? Math.min(100, Math.floor((n / of) * 100)) : 0
    if (pct === last) return
    last = pct
    const width = 30
    const filled = Math.round((pct / 100) * width)
    stream.write(`\r${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(pct).padStart(3)}% ${mib(n)}/${mib(of)} MiB`)
  }
  return {onProgress, done: () => last >= 0 && stream.write('\r\u001b[2K')}
}
