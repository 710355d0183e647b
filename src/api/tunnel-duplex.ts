/**
 * Byte streams with flow control over the broker tunnel (previews of an agent's ports): both
 * ends see a Node Duplex, so `pipe` carries backpressure from the slowest side to the other.
 *
 * Data goes as binary WebSocket messages, `<stream id: uint32 BE><bytes>` (no base64, no
 * JSON). Each side may have at most WINDOW bytes sent and not yet acknowledged; the receiver
 * acknowledges (`{t: 'ack', sid, n}`) what its reader has taken, so memory held per stream is
 * bounded on both ends however slow the browser or the agent's server is. The stream opens with
 * the `open` message (`flow: true`) and ends with `close`, as the other streams do.
 */
import {Duplex} from 'node:stream'

/** Bytes one side may have in flight, unacknowledged, per stream. */
export const WINDOW = 4 * 1024 * 1024
/** The largest data message (a frame of ws carries it in one piece). */
const MAX_FRAME = 256 * 1024
/** Acknowledge once this much was taken (and whenever the reader asks for more). */
const ACK_EVERY = WINDOW / 4

export function dataFrame(sid: number, chunk: Buffer): Buffer {
  const head = Buffer.allocUnsafe(4)
  head.writeUInt32BE(sid, 0)
  return Buffer.concat([head, chunk])
}

export function parseFrame(frame: Buffer): {sid: number; payload: Buffer} | null {
  if (frame.length < 4) return null
  return {sid: frame.readUInt32BE(0), payload: frame.subarray(4)}
}

/** How a duplex sends: binary data, acknowledgements and the close, on its tunnel. */
export interface DuplexOut {
  data(frame: Buffer): void
  ack(n: number): void
  close(error?: {code: string; message: string}): void
}

export class TunnelDuplex extends Duplex {
  private inFlight = 0
  private blocked: (() => void) | null = null
  private unacked = 0
  private remoteClosed = false

  constructor(
    readonly sid: number,
    private readonly out: DuplexOut,
  ) {
    super({allowHalfOpen: false})
    // Failures end the stream ('close' follows); whoever uses it may listen for the reason too.
    this.on('error', () => {})
  }

  /** Bytes from the other side. */
  receive(payload: Buffer): void {
    if (this.destroyed || this.remoteClosed) return
    this.unacked += payload.length
    if (this.push(payload) && this.unacked >= ACK_EVERY) this.flushAck()
  }

  /** The other side's reader took `n` bytes. */
  acked(n: number): void {
    this.inFlight = Math.max(0, this.inFlight - n)
    if (this.blocked && this.inFlight < WINDOW) {
      const go = this.blocked
      this.blocked = null
      go()
    }
  }

  /** The other side closed (or failed): no more data either way. */
  closedRemotely(error?: {code: string; message: string}): void {
    if (this.remoteClosed || this.destroyed) return
    this.remoteClosed = true
    if (error) return void this.destroy(Object.assign(new Error(error.message), {code: error.code}))
    this.push(null)
    this.end()
  }

  override _read(): void {
    this.flushAck()
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.remoteClosed) return done()
    for (let at = 0; at < chunk.length; at += MAX_FRAME) this.out.data(dataFrame(this.sid, chunk.subarray(at, at + MAX_FRAME)))
    this.inFlight += chunk.length
    if (this.inFlight < WINDOW) done()
    else this.blocked = () => done()
  }

  /**
   * Ending our side closes the whole stream (the tunnel has no half-close): the other side is
   * told, and what it would still send is not read, so the readable side ends here too (a
   * socket piped from this one is ended rather than left half-open).
   */
  override _final(done: (err?: Error | null) => void): void {
    if (!this.remoteClosed) this.out.close()
    this.remoteClosed = true
    this.push(null)
    done()
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    const code = (err as {code?: unknown} | null)?.code
    if (!this.remoteClosed) this.out.close(err ? {code: typeof code === 'string' ? code : 'stream_error', message: err.message} : undefined)
    this.remoteClosed = true
    this.blocked = null
    done(err)
  }

  private flushAck(): void {
    if (this.unacked === 0 || this.remoteClosed) return
    this.out.ack(this.unacked)
    this.unacked = 0
  }
}

/** The open duplex streams of one tunnel connection, by stream ID. */
export class DuplexTable {
  private readonly streams = new Map<number, TunnelDuplex>()

  add(d: TunnelDuplex): TunnelDuplex {
    this.streams.set(d.sid, d)
    d.once('close', () => this.streams.get(d.sid) === d && this.streams.delete(d.sid))
    return d
  }
  get(sid: number): TunnelDuplex | undefined {
    return this.streams.get(sid)
  }
  /** A binary message: its stream's data. */
  frame(raw: Buffer): void {
    const f = parseFrame(raw)
    if (f) this.streams.get(f.sid)?.receive(f.payload)
  }
  /** The other side closed `sid`; true when it was a duplex here. */
  closed(sid: number, error?: {code: string; message: string}): boolean {
    const d = this.streams.get(sid)
    if (!d) return false
    this.streams.delete(sid)
    d.closedRemotely(error)
    return true
  }
  endAll(error: {code: string; message: string}): void {
    for (const sid of [...this.streams.keys()]) this.closed(sid, error)
  }
}
