// The two kinds of origin a URL source comes from, behind the one fetch function the fetch path and the range
// reader call: an http(s) server through the guarded fetcher, or a store (s3://, gs://, abs://, local://) whose
// read answers the same way (status, headers, body; 206 for a range: src/stores/store.ts). So sniffing, limits,
// the first range, the range reader and the spool are the same code for both, as imgproxy plugs its storage
// readers into its fetcher as transports.
import type { IncomingHttpHeaders } from 'node:http'
import { addAbortSignal, type Readable } from 'node:stream'
import { errors } from '../errors.ts'
import { isStoreUrl, parseStoreUrl, storeUrl } from '../stores/location.ts'
import type { Stores } from '../stores/registry.ts'
import { isOurs, storeErrors } from '../stores/store-errors.ts'
import type { ObjectLocation } from '../stores/store.ts'
import { contentLength, discard, type FetchedBody, type RangeHeaders } from './fetch-source.ts'

export type OriginFetch = (url: string | URL, signal: AbortSignal, headers?: RangeHeaders) => Promise<FetchedBody>

export interface Origins {
  fetch: OriginFetch
}

/** The answer's validator of the kind `ifRange` is: its ETag for an ETag, its Last-Modified for a date. */
function validatorOf (headers: IncomingHttpHeaders, ifRange: string): string | undefined {
  const value = ifRange.startsWith('"') || ifRange.startsWith('W/') ? headers.etag : headers['last-modified']
  return typeof value === 'string' ? value : undefined
}

/**
 * A body that fails mid-read (a reset, a cut connection) fails with the store's own error, which names the
 * store (`s3://media could not be reached`), rather than the SDK's, which the fetch path could only call
 * "could not be reached" without saying what. Done where every failure goes through, destroy(), rather than by a
 * stream behind the body: that would cost every chunk. An abort (the deadline, the byte-rate floor) and our own
 * refusals keep their error.
 */
function namingTheStore (body: Readable, location: ObjectLocation, signal: AbortSignal): void {
  const destroy = body.destroy
  body.destroy = function destroyNamingTheStore (this: Readable, err?: Error) {
    const ours = err === undefined || err === null || signal.aborted || isOurs(err) || isOurs((err as { cause?: unknown }).cause)
    const failure = ours ? {} : { name: (err as { code?: string }).code ?? err.name }
    return destroy.call(this, ours ? err : storeErrors.failed(location, failure))
  }
}

export function createOrigins (http: OriginFetch, stores: Stores, maxBytes: number): Origins {
  async function fromStore (raw: string, signal: AbortSignal, { range, ifRange }: RangeHeaders = {}): Promise<FetchedBody> {
    const location = parseStoreUrl(raw)
    const store = await stores.storeFor(location)
    signal.throwIfAborted()
    const { statusCode, headers, body } = await store.read(location, { range, ifRange, signal })
    // Every store's body ends with the request's deadline, as undici's does with its signal.
    addAbortSignal(signal, body)
    namingTheStore(body, location, signal)
    // A later range must come from the object the first one came from. A store asked with a strong ETag
    // refuses it itself (If-Match); one whose validator is a date (no ETag, or a weak one) may not (an
    // S3-compatible server that ignores If-Unmodified-Since), so the answer's own validator is compared too.
    if (ifRange !== undefined && validatorOf(headers, ifRange) !== ifRange) {
      discard(body)
      throw storeErrors.changed(location)
    }
    const length = contentLength(headers)
    if (statusCode !== 206 && length !== undefined && length > maxBytes) {
      discard(body)
      throw new errors.PayloadTooLarge(`the source is more than ${maxBytes} bytes (MAX_SOURCE_BYTES)`)
    }
    // The canonical spelling, which reads back to the same object (later ranges are asked by it).
    return { body, url: new URL(storeUrl(location)), statusCode, headers }
  }

  return {
    fetch: (url, signal, headers) => {
      const raw = String(url)
      return isStoreUrl(raw) ? fromStore(raw, signal, headers) : http(url, signal, headers)
    }
  }
}
