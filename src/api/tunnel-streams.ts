/**
 * Per-stream bookkeeping shared by both ends of the broker tunnel: listeners for data, resize
 * and close, and a closed flag, so each end only adds what it sends. A listener added after
 * the stream closed is called at once (a stream may end while its user is still setting up).
 */
export type StreamError = {code: string; message: string}

export class StreamEnd {
  closed = false
  private readonly data: Array<(chunk: Buffer) => void> = []
  private readonly resizes: Array<(cols: number, rows: number) => void> = []
  private readonly closes: Array<(error?: StreamError) => void> = []

  onData(l: (chunk: Buffer) => void) {
    this.data.push(l)
  }
  onResize(l: (cols: number, rows: number) => void) {
    this.resizes.push(l)
  }
  onClose(l: (error?: StreamError) => void) {
    if (this.closed) l()
    else this.closes.push(l)
  }
  emitData(chunk: Buffer) {
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
