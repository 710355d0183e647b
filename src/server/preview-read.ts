/**
 * Reading the agent's answer for a preview (preview-proxy.ts) into one buffer, reused for every
 * read, instead of the new 64 KiB buffer Node makes for each read of a socket.
 *
 * Why: on a 10 MiB preview download those buffers (a malloc, an ArrayBuffer, the GC's sweep and
 * a free on V8's worker threads, and memory that is cold when the kernel copies into it) were
 * about 40% of the Hub's CPU: 19-20 ms per download, 11-12 ms with one reused 256 KiB buffer
 * (V8's worker threads 4-6 ms -> ~1.5 ms), the same runs (docs/benchmarks.md).
 *
 * Node offers this as the `onread` option of `net.connect`, which can only be given where a
 * socket is made, and the socket comes made from the broker (broker/ports/ingress.ts). So it is
 * switched here as that option sets a socket up: net.Socket's own `kBuffer`/`kBufferCb` fields
 * (which its pause and resume honour) and its handle's `useUserBuffer`. Where those are not
 * there (a tunnel's byte stream, a Node whose internals moved) nothing changes and false is
 * returned: the caller reads 'data' events as before.
 */
import type {Duplex} from 'node:stream'

/**
 * From now on, every read of `stream` lands in `buffer` and is handed to `onChunk` as a view of
 * it, valid only until `onChunk` returns true: returning false stops reading (nothing more is
 * read into the buffer) until `stream.resume()`. 'end', 'error' and 'close' come as before.
 * False (and nothing changed) when `stream` is not a socket this works on, or already holds
 * bytes it read.
 */
export function readIntoBuffer(stream: Duplex, buffer: Buffer, onChunk: (chunk: Buffer) => boolean): boolean {
  const handle = (stream as unknown as {_handle?: {useUserBuffer?: (b: Buffer) => void} | null})._handle
  if (!handle || typeof handle.useUserBuffer !== 'function' || stream.readableLength > 0 || stream.readableEnded) return false
  const symbols = Object.getOwnPropertySymbols(stream)
  const kBuffer = symbols.find((s) => s.description === 'kBuffer')
  const kBufferCb = symbols.find((s) => s.description === 'kBufferCb')
  const fields = stream as unknown as Record<symbol, unknown>
  if (!kBuffer || !kBufferCb || fields[kBuffer] !== null || fields[kBufferCb] !== null) return false
  fields[kBuffer] = buffer
  fields[kBufferCb] = (nread: number, buf: Buffer) => onChunk(buf.subarray(0, nread))
  handle.useUserBuffer(buffer)
  // Flowing, so that the end of the stream is emitted ('data' is not, in this mode).
  stream.resume()
  return true
}
