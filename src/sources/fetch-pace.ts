// The byte-rate floor of a URL fetch. A fetch holds one of MAX_CONCURRENT_FETCHES slots: an origin that drips
// (1 byte a second, say) would hold it for all of FETCH_TIMEOUT_MS, and 16 of them would turn every other URL
// source away with 503. Counted where the body is read (src/sources/url-fetch.ts spools it as fast as it comes).
import type { Readable } from 'node:stream'
import { errors } from '../errors.ts'

/** The floor is checked over windows this long, from the moment the headers arrived. */
export const FETCH_RATE_WINDOW_MS = 2000

/**
 * The body, counted: a window that brings less than `minBytesPerSecond` calls `tooSlow` with the catalogue's
 * error (502 SOURCE_FETCH_FAILED), which should abort the fetch. 0 turns the floor off.
 */
export function paceBody (body: Readable, minBytesPerSecond: number, tooSlow: (err: Error) => void): Readable {
  if (minBytesPerSecond === 0 || body.destroyed) return body
  const floorPerWindow = minBytesPerSecond * FETCH_RATE_WINDOW_MS / 1000
  let arrived = 0
  // Counted as undici pushes each chunk into the body, not by a Transform behind it: that cost every chunk two
  // more streams' bookkeeping, and the pipeline joining them an AbortController and a DOMException per fetch,
  // together ~0.1 ms of the main thread per photo (measured by profile: the streams' share 0.10-0.14 -> 0.05 ms,
  // the AbortController and DOMException 0.05 ms; `node load/main-thread.ts PHOTO --stand-in --route url --cpu-prof DIR`).
  const push = body.push
  body.push = function countedPush (this: Readable, chunk: unknown, encoding?: BufferEncoding) {
    if (chunk !== null && chunk !== undefined) arrived += (chunk as Uint8Array).length
    return push.call(this, chunk, encoding)
  }
  const timer = setInterval(() => {
    if (arrived >= floorPerWindow) {
      arrived = 0
      return
    }
    clearInterval(timer)
    tooSlow(new errors.SourceFetchFailed(`the source sent less than ${minBytesPerSecond} bytes/s (FETCH_MIN_BYTES_PER_SECOND)`))
  }, FETCH_RATE_WINDOW_MS).unref()
  // Its end or failure ends the count ('close' follows either).
  body.once('close', () => clearInterval(timer))
  return body
}
