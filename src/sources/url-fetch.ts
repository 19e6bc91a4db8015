// URL sources (http(s) and store URLs) fetched and spooled: the fetch concurrency bound, the deadline, the pace
// floor, the first range of a large remote video, and a refusal that leaves nothing open. The sources plugin
// (src/plugins/sources.ts) owns the parts it is made of; this file is what a URL goes through.
import type { Readable } from 'node:stream'
import type { Config } from '../config.ts'
import { errors } from '../errors.ts'
import { contentLength, discard, fetchError, type FetchedBody, type RangeHeaders } from './fetch-source.ts'
import { paceBody } from './fetch-pace.ts'
import { fromFirstRange } from './first-range.ts'
import type { Origins } from './origins.ts'
import type { RangeReader } from './range-reader.ts'
import type { SpooledSource, SpoolLimits } from './spool.ts'

export interface FetchOptions extends Pick<SpoolLimits, 'algorithms' | 'anyBytes' | 'hashInJob'> {
  /**
   * A video of RANGE_READ_MIN_BYTES or more, from a server that answers ranges, is not downloaded: ffmpeg
   * reads the ranges it needs through the range reader (src/sources/range-reader.ts). For jobs that decode
   * part of a video; never for digests of every byte.
   */
  remoteVideos?: boolean
}

export type SpoolWithLimits = (stream: Readable, limits: Pick<SpoolLimits, 'declaredBytes' | 'algorithms' | 'anyBytes' | 'signal' | 'hashInJob' | 'ownsChunks'>) => Promise<SpooledSource>

interface UrlFetchParts {
  config: Pick<Config, 'maxConcurrentFetches' | 'fetchTimeoutMs' | 'fetchMinBytesPerSecond' | 'rangeReadMinBytes' | 'maxSourceBytes'>
  origins: Origins
  rangeReader: RangeReader | undefined
  spoolWithLimits: SpoolWithLimits
  /** Counted when a fetch is refused because MAX_CONCURRENT_FETCHES are under way. */
  onShed: () => void
}

export function createUrlFetch ({ config, origins, rangeReader, spoolWithLimits, onShed }: UrlFetchParts) {
  /**
   * URL sources being fetched now: at most MAX_CONCURRENT_FETCHES, so fetches in progress hold at most that many
   * MEMORY_SPOOL_BYTES. A fetched source leaves the count when its bytes are in, yet stays in memory until its
   * request ends (its job queued and run): the memory of fetched sources is bounded by admission and the
   * pressure limits, not by this count.
   */
  let fetching = 0

  /**
   * Fetched within FETCH_TIMEOUT_MS (or until `signal` aborts); a failure mid-body (reset, length mismatch) is a
   * fetch failure too. Refused with 503 before any connection while MAX_CONCURRENT_FETCHES are under way.
   */
  async function fetchUrl (url: string, signal?: AbortSignal, options: FetchOptions = {}): Promise<SpooledSource> {
    if (fetching >= config.maxConcurrentFetches) {
      onShed()
      throw new errors.Overloaded()
    }
    fetching++
    try {
      return await fetchAdmitted(url, signal, options)
    } finally {
      fetching--
    }
  }

  async function fetchAdmitted (url: string, signal: AbortSignal | undefined, { remoteVideos = false, ...digests }: FetchOptions): Promise<SpooledSource> {
    const timeout = AbortSignal.timeout(config.fetchTimeoutMs)
    // A body below FETCH_MIN_BYTES_PER_SECOND gives its slot back at once, with the source's 502.
    const tooSlow = new AbortController()
    // Aborted at a refusal (413 by the spool's count, 415 by sniffing ...): the body is left unread, and a store's
    // body (addAbortSignal in origins.ts) or undici's would keep its socket to the origin until FETCH_TIMEOUT_MS.
    const refused = new AbortController()
    const fetchSignal = AbortSignal.any(signal === undefined ? [timeout, tooSlow.signal, refused.signal] : [timeout, tooSlow.signal, refused.signal, signal])
    // A fetched body itself: its chunks are undici's own, and it ends at its Content-Length (SpoolLimits.ownsChunks).
    const fetchedBody = (declaredBytes: number | undefined) => ({ ...digests, ownsChunks: true, declaredBytes })
    const fetch = async (target: string | URL, headers: RangeHeaders = {}): Promise<FetchedBody> => {
      const fetched = await origins.fetch(target, fetchSignal, headers)
      return { ...fetched, body: paceBody(fetched.body, config.fetchMinBytesPerSecond, err => tooSlow.abort(err)) }
    }
    try {
      // "bytes=0-" asks for the whole file all the same: a server that ignores Range answers 200 with it.
      const ranged = remoteVideos && rangeReader !== undefined
      const fetched = await fetch(url, ranged ? { range: 'bytes=0-' } : {})
      if (fetched.statusCode === 416) { // no byte 0 (an empty file), or a server confused by ranges: ask plainly
        discard(fetched.body)
        return await spoolWithLimits((await fetch(url)).body, digests)
      }
      if (!ranged || fetched.statusCode !== 206) return await spoolWithLimits(fetched.body, fetchedBody(contentLength(fetched.headers)))
      return await fromFirstRange(fetched, fetchSignal, {
        fetch: (target, _signal, headers) => fetch(target, headers),
        reader: rangeReader,
        remoteFromBytes: config.rangeReadMinBytes,
        maxSourceBytes: config.maxSourceBytes,
        spool: (stream, framedBytes) => spoolWithLimits(stream, framedBytes === undefined ? digests : fetchedBody(framedBytes))
      })
    } catch (err) {
      // Mapped first: once aborted, the signal would make any failure read as "timed out".
      const error = fetchError(err, fetchSignal)
      refused.abort(error)
      throw error
    }
  }

  return fetchUrl
}
