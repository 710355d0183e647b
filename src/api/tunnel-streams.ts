/**
 * Per-stream bookkeeping shared by both ends of the broker tunnel: listeners for data, resize
 * and close, and a closed flag, so each end only adds what it sends. A listener added after
 * the stream closed is called at once (a stream may end while its user is still setting up).
 */
export type StreamError = {code: string; message: string}

/** Bytes held for a stream's first data listener (see StreamEnd.onData); more is dropped. */
const MAX_EARLY_BYTES = 1024 * 1024

export class StreamEnd {
  closed = false
  private readonly data: Array<(chunk: Buffer) => void> = []
  // Data that arrived before anyone listened: an attach's first screen is sent as soon as the
  // broker opens the stream, before the Hub has finished the browser's WebSocket upgrade.
  private early: Buffer[] | null = []
  private earlyBytes = 0
  private readonly resizes: Array<(cols: number, rows: number) => void> = []
  private readonly closes: Array<(error?: StreamError) => void> = []

  /** The first listener also gets, at once, what arrived before it. */
  onData(l: (chunk: Buffer) => void) {
    this.data.push(l)
    const early = this.early
    this.early = null
    if (early) for (const chunk of early) l(chunk)
  }
  onResize(l: (cols: number, rows: number) => void) {
    this.resizes.push(l)
  }
  onClose(l: (error?: StreamError) => void) {
    if (this.closed) l()
    else this.closes.push(l)
  }
  emitData(chunk: Buffer) {
    if (this.early) {
      if (this.earlyBytes + chunk.length <= MAX_EARLY_BYTES) this.early.push(chunk)
      this.earlyBytes += chunk.length
      return
    }
    for (const l of this.data) l(chunk)
  }
  emitResize(cols: number, rows: number) {
    for (const l of this.resizes) l(cols, rows)
  }
  /** Marks the stream closed and tells its listeners; true only the first time. */
  end(error?: StreamError): boolean {
    if (this.closed) return false
    this.closed = true
    for (const l of this.closes) l(error)
    return true
  }
}

/** The open streams of one tunnel connection, by stream ID. */
export class StreamTable {
  private readonly streams = new Map<number, StreamEnd>()

  open(sid: number): StreamEnd {
    const s = new StreamEnd()
    this.streams.set(sid, s)
    return s
  }
  get(sid: number): StreamEnd | undefined {
    return this.streams.get(sid)
  }
  /** Removes and ends one stream; returns it when it was open. */
  end(sid: number, error?: StreamError): StreamEnd | undefined {
    const s = this.streams.get(sid)
    if (!s) return undefined
    this.streams.delete(sid)
    s.end(error)
    return s
  }
  /** Ends every stream (the connection dropped). */
  endAll(error?: StreamError): void {
    for (const sid of [...this.streams.keys()]) this.end(sid, error)
  }
}
