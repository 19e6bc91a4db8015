// gs://bucket/key through Google's official client (@google-cloud/storage): its auth client, metadata and
// uploads; reads are one media request of ours, authorized by that client (see download). Credentials: GCS_KEY
// (a service account's JSON key), else Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's,
// workload identity, the metadata server). With GCS_ENDPOINT and no GCS_KEY (an emulator) requests go
// unauthenticated, as the client does by default for custom endpoints. The object's generation is its ETag: later
// ranges read that very generation, so an object replaced meanwhile is refused, not mixed. Imported on the first
// gs:// URL.
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { Storage, type File } from '@google-cloud/storage'
import { Agent, request } from 'undici'
import { storeAnswer } from '../answer.ts'
import { parseContentRange } from '../../sources/byte-ranges.ts'
import { discard } from '../../sources/fetch-source.ts'
import type { GcsSettings } from '../settings.ts'
import { isOurs, storeErrors, type StoreFailure } from '../store-errors.ts'
import type { ObjectLocation, ObjectStore, ReadOptions, StoreAnswer } from '../store.ts'

/** The client's ApiError carries the HTTP status as a number `code`; network errors a string one. */
function failureOf (err: unknown): StoreFailure {
  const e = err as { code?: number | string, name?: string }
  return typeof e.code === 'number' ? { status: e.code, name: e.name } : { name: e.code ?? e.name }
}

/** `bytes=N-[M]`, the only form the fetch path and the range reader ask. */
function rangeOf (range: string | undefined): { start: number, end?: number } | undefined {
  const match = range === undefined ? null : /^bytes=(\d{1,15})-(\d{0,15})$/.exec(range)
  return match === null ? undefined : { start: Number(match[1]), end: match[2] === '' ? undefined : Number(match[2]) }
}

/** "<generation>" as an ETag, and back. */
const etagOf = (generation: string | undefined) => generation === undefined || generation === '' ? undefined : `"${generation}"`
const generationOf = (etag: string | undefined) => /^"(\d+)"$/.exec(etag ?? '')?.[1]

export function createGcsStore (settings: GcsSettings, timeoutMs: number): ObjectStore {
  const key = settings.key === undefined ? undefined : JSON.parse(settings.key) as { project_id?: string }
  const storage = new Storage({
    apiEndpoint: settings.endpoint,
    credentials: key,
    projectId: key?.project_id,
    useAuthWithCustomEndpoint: key !== undefined,
    // No retries: the client's backoff starts at 1 s and would spend the request's deadline (FETCH_TIMEOUT_MS)
    // on a store that is down; the caller of thumbd retries, as with an HTTP origin.
    retryOptions: { autoRetry: false, totalTimeout: Math.ceil(timeoutMs / 1000) }
  })
  const fileOf = ({ bucket, key }: ObjectLocation, generation?: string): File => storage.bucket(bucket).file(key, generation === undefined ? {} : { generation: Number(generation) })

  function fail (location: ObjectLocation, err: unknown, signal?: AbortSignal): Error {
    if (isOurs(err)) return err
    const failure = failureOf(err)
    return failure.status === 404 ? storeErrors.notFound(location) : storeErrors.failed(location, failure, signal)
  }

  // The media is fetched by hand, with the SDK's auth client for the credentials: the SDK's createReadStream
  // gives no handle that cancels its request before the response arrives, so a GCS endpoint that accepts and
  // never answers kept one socket per read open past the 502 (until the SDK's own 60 s timeout, or forever
  // for a server that trickles). undici ends the request, connection included, when the signal aborts.
  const agent = new Agent({ connect: { timeout: Math.min(5000, timeoutMs) }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs })
  // As the SDK decides: a custom endpoint (an emulator) goes unauthenticated unless a key is given for it.
  const authorized = !storage.customEndpoint || storage.useAuthWithCustomEndpoint === true
  const mediaUrl = ({ bucket, key }: ObjectLocation, generation?: string) =>
    `${storage.baseUrl}/b/${encodeURIComponent(bucket)}/o/${encodeURIComponent(key)}?alt=media${generation === undefined ? '' : `&generation=${generation}`}`

  /** The media request's answer (its status and headers) and its body, once the answer has come. */
  async function download (location: ObjectLocation, { range, ifRange, signal }: ReadOptions): Promise<StoreAnswer> {
    const asked = rangeOf(range)
    const pinned = generationOf(ifRange)
    const url = mediaUrl(location, pinned)
    // The stored bytes as they are (as the SDK's decompress: false): a gzip-encoded object is not unzipped.
    const headers: Record<string, string> = { 'accept-encoding': 'gzip', 'cache-control': 'no-store' }
    if (asked !== undefined) headers.range = `bytes=${asked.start}-${asked.end ?? ''}`
    if (authorized) Object.assign(headers, await storage.authClient.getRequestHeaders(url))
    signal?.throwIfAborted()
    const response = await request(url, { dispatcher: agent, signal, headers })
    const status = response.statusCode
    if (status === 416 && asked !== undefined) { // "bytes=0-" of an empty object: the whole of it, as a server ignoring Range
      discard(response.body)
      return download(location, { ifRange, signal })
    }
    if (status >= 300) {
      discard(response.body)
      // A generation read before that is gone: the object was replaced or deleted while it was read.
      if (status === 404 && pinned !== undefined) throw storeErrors.changed(location)
      throw Object.assign(new Error('GCS answered'), { code: status })
    }
    const part = status === 206 ? parseContentRange(response.headers['content-range']) : undefined
    const size = part?.size ?? Number(response.headers['content-length'] ?? 0)
    const generation = response.headers['x-goog-generation']
    const lastModified = response.headers['last-modified']
    const contentType = response.headers['content-type']
    return storeAnswer(response.body, {
      size,
      etag: etagOf(typeof generation === 'string' ? generation : pinned),
      lastModified: typeof lastModified === 'string' ? new Date(lastModified) : undefined,
      contentType: typeof contentType === 'string' ? contentType : undefined
    }, part)
  }

  return {
    scheme: 'gs',

    async read (location, options = {}) {
      try {
        return await download(location, options)
      } catch (err) {
        throw fail(location, err, options.signal)
      }
    },

    async stat (location) {
      try {
        const [metadata] = await fileOf(location).getMetadata()
        return {
          size: Number(metadata.size ?? 0),
          etag: etagOf(metadata.generation === undefined ? undefined : String(metadata.generation)),
          lastModified: metadata.updated === undefined ? undefined : new Date(metadata.updated),
          metadata: Object.fromEntries(Object.entries(metadata.metadata ?? {}).map(([k, v]) => [k, String(v)]))
        }
      } catch (err) {
        if (failureOf(err).status === 404) return undefined
        throw fail(location, err)
      }
    },

    async write (location, body, { contentType, cacheControl, metadata, signal }) {
      const file = fileOf(location)
      try {
        // A single-request upload: the object appears whole when it ends, or not at all.
        const out = file.createWriteStream({ resumable: false, contentType, metadata: { cacheControl, metadata } })
        await pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : body, out, { signal })
        const [stored] = await file.getMetadata()
        return { size: Number(stored.size ?? 0), etag: etagOf(stored.generation === undefined ? undefined : String(stored.generation)) }
      } catch (err) {
        throw fail(location, err, signal)
      }
    },

    async remove (location) {
      try {
        await fileOf(location).delete({ ignoreNotFound: true })
      } catch (err) {
        throw fail(location, err)
      }
    },

    async close () {
      await agent.close()
    }
  }
}
