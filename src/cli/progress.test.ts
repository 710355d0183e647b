import {describe, expect, it} from 'vitest'
import {progressBar, PROGRESS_MIN_BYTES} from './progress.js'

const fakeStream = (isTTY: boolean) => {
  const out: string[] = []
  return {stream: {isTTY, write: (s: string) => out.push(s)} as unknown as NodeJS.WriteStream, out}
}

describe('progress bar', () => {
  it('draws on a TTY for a large transfer, once per percent, and clears the line at the end', () => {
    const {stream, out} = fakeStream(true)
    const bar = progressBar('uploading', PROGRESS_MIN_BYTES * 2, stream)
    expect(bar.onProgress).toBeDefined()
    bar.onProgress!(PROGRESS_MIN_BYTES, null)
    bar.onProgress!(PROGRESS_MIN_BYTES + 1, null)
    bar.onProgress!(PROGRESS_MIN_BYTES * 2, null)
    bar.done()
    expect(out).toHaveLength(3)
    expect(out[0]).toBe('\ruploading [###############---------------]  50% 4.0/8.0 MiB')
    expect(out[1]).toContain('100%')
    expect(out[2]).toBe('\r\u001b[2K')
  })
  it('draws nothing when stderr is not a TTY, or for a small file', () => {
    for (const [tty, size] of [
      [false, PROGRESS_MIN_BYTES * 2],
      [true, PROGRESS_MIN_BYTES - 1],
    ] as const) {
      const {stream, out} = fakeStream(tty)
      const bar = progressBar('x', size, stream)
      expect(bar.onProgress).toBeUndefined()
      bar.done()
      expect(out).toEqual([])
    }
  })
})
