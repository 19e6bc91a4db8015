// abs://container/key through Microsoft's official client (@azure/storage-blob), from the storage account
// ABS_NAME. Credentials: ABS_KEY (the account's shared key), else DefaultAzureCredential from @azure/identity
// (environment, workload identity, managed identity, Azure CLI), imported only then. ABS_ENDPOINT points at
// Azurite or another cloud (for Azurite, the account is the URL's first path segment). Imported on the first
// abs:// URL.
import type { Readable } from 'node:stream'
import { BlobServiceClient, StorageSharedKeyCredential, type BlobDownloadResponseParsed } from '@azure/storage-blob'
import { quoteEtag, storeAnswer } from '../answer.ts'
import { parseContentRange } from '../../sources/byte-ranges.ts'
import type { AbsSettings } from '../settings.ts'
import { isOurs, storeErrors, type StoreFailure } from '../store-errors.ts'
import type { ObjectLocation, ObjectStore, ReadOptions, StoreAnswer } from '../store.ts'

/** RestError: the HTTP status, and the service's error code (BlobNotFound, AuthorizationFailure ...) or a network one. */
function failureOf (err: unknown): StoreFailure {
  const e = err as { statusCode?: number, code?: string, name?: string }
  return { status: e.statusCode, name: e.code ?? e.name }
}

/** `bytes=N-[M]` as the client's offset and count. */
function rangeOf (range: string | undefined): { offset: number, count?: number } | undefined {
  const match = range === undefined ? null : /^bytes=(\d{1,15})-(\d{0,15})$/.exec(range)
  if (match === null) return undefined
  const offset = Number(match[1])
  return { offset, count: match[2] === '' ? undefined : Number(match[2]) - offset + 1 }
}

/** The first range's validator as a condition: its ETag must match, or (a date) the blob be unmodified since. */
function conditionsOf (ifRange: string | undefined): { ifMatch?: string, ifUnmodifiedSince?: Date } | undefined {
  if (ifRange === undefined) return undefined
  if (ifRange.startsWith('"')) return { ifMatch: ifRange }
  const date = new Date(ifRange)
  return Number.isNaN(date.getTime()) ? undefined : { ifUnmodifiedSince: date }
}

export async function createAbsStore (settings: AbsSettings, timeoutMs: number): Promise<ObjectStore> {
  const url = settings.endpoint ?? `https://${settings.name}.blob.core.windows.net`
  const credential = settings.key !== undefined
    ? new StorageSharedKeyCredential(settings.name, settings.key)
    : new (await import('@azure/identity')).DefaultAzureCredential()
  // One try: the request's own deadline bounds the read, and the client's backoff would spend it on a store that is down.
  const service = new BlobServiceClient(url, credential, { retryOptions: { maxTries: 1, tryTimeoutInMs: timeoutMs } })
  const blobOf = ({ bucket, key }: ObjectLocation) => service.getContainerClient(bucket).getBlockBlobClient(key)

  function fail (location: ObjectLocation, err: unknown, signal?: AbortSignal): Error {
    if (isOurs(err)) return err
    const failure = failureOf(err)
    if (failure.status === 412) return storeErrors.changed(location)
    return failure.status === 404 ? storeErrors.notFound(location) : storeErrors.failed(location, failure, signal)
  }

  async function download (location: ObjectLocation, { range, ifRange, signal }: ReadOptions): Promise<StoreAnswer> {
    const asked = rangeOf(range)
    let answer: BlobDownloadResponseParsed
    try {
      answer = await blobOf(location).download(asked?.offset ?? 0, asked?.count, { abortSignal: signal, conditions: conditionsOf(ifRange) })
    } catch (err) {
      // "bytes=0-" of an empty blob: as a server that ignores Range, the whole (empty) blob.
      if (asked !== undefined && failureOf(err).status === 416) return download(location, { ifRange, signal })
      throw err
    }
    const size = parseContentRange(answer.contentRange)?.size ?? answer.contentLength ?? 0
    // The client asks no range for "bytes=0-" and gets a 200: the same bytes as a 206 of all of it, which is
    // what the fetch path needs to see to keep a large video remote.
    const part = answer._response.status === 206
      ? parseContentRange(answer.contentRange)
      : asked !== undefined && size > 0 ? { start: 0, end: size - 1 } : undefined
    return storeAnswer(answer.readableStreamBody as Readable, { size, etag: quoteEtag(answer.etag), lastModified: answer.lastModified, contentType: answer.contentType }, part)
  }

  return {
    scheme: 'abs',

    async read (location, options = {}) {
      try {
        return await download(location, options)
      } catch (err) {
        throw fail(location, err, options.signal)
      }
    },

    async stat (location, signal) {
      try {
        const properties = await blobOf(location).getProperties({ abortSignal: signal })
        return { size: properties.contentLength ?? 0, etag: quoteEtag(properties.etag), lastModified: properties.lastModified, metadata: properties.metadata }
      } catch (err) {
        if (failureOf(err).status === 404) return undefined
        throw fail(location, err, signal)
      }
    },

    async write (location, body, { contentType, cacheControl, metadata, signal }) {
      const blob = blobOf(location)
      const options = { blobHTTPHeaders: { blobContentType: contentType, blobCacheControl: cacheControl }, metadata, abortSignal: signal }
      try {
        // Blocks, then one commit: the blob appears whole, or not at all.
        const done = Buffer.isBuffer(body) ? await blob.uploadData(body, options) : await blob.uploadStream(body, 4 * 2 ** 20, 2, options)
        const properties = await blob.getProperties()
        return { size: properties.contentLength ?? 0, etag: quoteEtag(done.etag) }
      } catch (err) {
        throw fail(location, err, signal)
      }
    },

    async remove (location) {
      try {
        await blobOf(location).deleteIfExists()
      } catch (err) {
        throw fail(location, err)
      }
    },

    async close () {}
  }
}
