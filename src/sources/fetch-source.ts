// Fetches URL sources on the main thread (network I/O belongs on the event loop; the job still runs in the pool).
// Every connection goes through a DNS hook that refuses non-public addresses, so the check applies to the
// address actually connected to (no DNS-rebinding gap), on every redirect hop, which are followed by hand.
import { lookup as dnsLookup } from 'node:dns/promises'
import type { LookupAddress, LookupOptions } from 'node:dns'
import type { IncomingHttpHeaders } from 'node:http'
import type { Readable } from 'node:stream'
import { Agent, request } from 'undici'
import { errors, ThumbdError } from '../errors.ts'
import { parseContentRange, type ByteRange } from './byte-ranges.ts'
import { addressAllowed, checkSourceUrl, PRIVATE_HINT, type SourcePolicy } from './url-policy.ts'

/** Resolves a hostname; injectable so tests can hand back any address without touching the network. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>

export interface FetcherOptions {
  policy: SourcePolicy
  /** Whole fetch, connect to last byte. */
  timeoutMs: number
  maxBytes: number
  resolve?: Resolver
}

export interface FetchedBody {
  body: Readable
  /** The URL finally fetched, after redirects. */
  url: URL
  statusCode: number
  headers: IncomingHttpHeaders
}

/** Extra request headers: a byte range (`bytes=0-`), and the validator that must still hold for it (If-Range). */
export interface RangeHeaders {
  range?: string
  ifRange?: string
}

const MAX_REDIRECTS = 3
const REDIRECTS = new Set([301, 302, 303, 307, 308])
const CONNECT_TIMEOUT_MS = 5000
/** The guard's refusal inside undici's connect error (not a catalogue code: fetchError maps it to one). */
const BLOCKED = 'THUMBD_BLOCKED_ADDRESS'

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/** A net/tls `lookup` that only ever hands over allowed addresses; one blocked answer refuses the host. */
export function guardedLookup (resolve: Resolver, policy: SourcePolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    resolve(hostname).then(found => {
      const addresses = found.filter(a => !options.family || a.family === options.family)
      if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), [])
      if (!addresses.every(a => addressAllowed(a.address, policy))) {
        return callback(Object.assign(new Error('the host resolves to a non-public address'), { code: BLOCKED }), [])
      }
      if (options.all === true) callback(null, addresses)
      else callback(null, addresses[0]!.address, addresses[0]!.family)
    }, (err: NodeJS.ErrnoException) => callback(err, []))
  }
}

export function createFetcher ({ policy, timeoutMs, maxBytes, resolve = host => dnsLookup(host, { all: true }) }: FetcherOptions) {
  const agent = new Agent({
    connect: { lookup: guardedLookup(resolve, policy), timeout: Math.min(CONNECT_TIMEOUT_MS, timeoutMs) },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs
  })

  /**
   * The response body, still streaming; `signal` must stay live until it has been read (it carries the total
   * timeout). With `range`, a 206 is the caller's to check and bound (src/sources/range-reader.ts).
   */
  async function fetchSource (raw: string | URL, signal: AbortSignal, { range, ifRange }: RangeHeaders = {}): Promise<FetchedBody> {
    let url = checkSourceUrl(String(raw), policy)
    for (let hop = 0; ; hop++) {
      const response = await request(url, {
        dispatcher: agent,
        signal,
        headers: {
          'user-agent': 'thumbd',
          accept: 'image/*, video/*;q=0.9, audio/*;q=0.8, */*;q=0.1',
          ...(range === undefined ? {} : { range }),
          ...(ifRange === undefined ? {} : { 'if-range': ifRange })
        }
      }).catch(err => { throw fetchError(err, signal) })
      const { statusCode, headers, body } = response
      if (REDIRECTS.has(statusCode) && headers.location !== undefined) {
        discard(body)
        if (hop === MAX_REDIRECTS) throw new errors.SourceFetchFailed(`more than ${MAX_REDIRECTS} redirects`)
        url = checkSourceUrl(new URL(String(headers.location), url).href, policy)
        continue
      }
      // 416 to a range is the caller's too: "bytes=0-" of an empty file.
      if ((statusCode < 200 || statusCode > 299) && !(statusCode === 416 && range !== undefined)) {
        discard(body) // never read, never echoed
        throw new errors.SourceFetchFailed(`upstream answered ${statusCode}`)
      }
      if (statusCode !== 206 && Number(headers['content-length']) > maxBytes) {
        discard(body)
        throw new errors.PayloadTooLarge(`the source declares more than ${maxBytes} bytes (MAX_SOURCE_BYTES)`)
      }
      return { body, url, statusCode, headers }
    }
  }

  return { fetchSource, close: () => agent.close() }
}

/**
 * The range an answer to "Range: bytes=start-[end]" carries: a 206 for exactly that start (and end, when one
 * was asked) of a file of `size` bytes. Anything else is dropped unread and refused: the source changed, or
 * answers ranges wrongly.
 */
export function expectRange ({ statusCode, headers, body }: FetchedBody, asked: { start: number, end?: number, size: number }): ByteRange {
  const got = parseContentRange(headers['content-range'])
  if (statusCode === 206 && got?.start === asked.start && got.size === asked.size && (asked.end === undefined || got.end === asked.end)) return got
  discard(body)
  throw new errors.SourceFetchFailed(statusCode === 206
    ? `asked for bytes ${asked.start}-${asked.end ?? ''} of ${asked.size}, the source answered ${String(headers['content-range'])}`
    : `the source answered ${statusCode} to a range request (it changed, or stopped honouring Range)`)
}

/** A body's length by its Content-Length, when that is a plain number: undici ends the body there, or fails it. */
export function contentLength (headers: IncomingHttpHeaders): number | undefined {
  const value = headers['content-length']
  return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : undefined
}

/** Drops a body unread. undici reports a destroyed body as an 'error' event, which is expected here. */
export function discard (body: Readable) {
  body.on('error', () => {})
  body.destroy()
}

/** Maps whatever undici, DNS or the guard threw onto the catalogue; details stay in the cause for the log. */
export function fetchError (err: unknown, signal?: AbortSignal): Error {
  for (let e = err as { code?: string, cause?: unknown } | undefined; e != null; e = e.cause as typeof e) {
    if (e.code === BLOCKED) return new errors.SourceForbidden(`the host resolves to a non-public address ${PRIVATE_HINT}`)
    if (e instanceof ThumbdError) return e
  }
  const reason = signal?.aborted === true ? 'timed out' : 'could not be reached'
  return Object.assign(new errors.SourceFetchFailed(reason), { cause: err })
}
