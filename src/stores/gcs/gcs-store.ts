// gs://bucket/key through Google's official client (@google-cloud/storage). Credentials: GCS_KEY (a service
// account's JSON key), else Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's, workload
// identity, the metadata server). With GCS_ENDPOINT and no GCS_KEY (an emulator) requests go unauthenticated, as
// the client does by default for custom endpoints. The object's generation is its ETag: later ranges read that
// very generation, so an object replaced meanwhile is refused, not mixed. Imported on the first gs:// URL.
import type { IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { Storage, type File } from '@google-cloud/storage'
import { storeAnswer } from '../answer.ts'
import { parseContentRange } from '../../sources/byte-ranges.ts'
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

  /** The media request's answer (its status and headers) and its body, once the answer has come. */
  async function download (location: ObjectLocation, { range, ifRange, signal }: ReadOptions): Promise<StoreAnswer> {
    const asked = rangeOf(range)
    const pinned = generationOf(ifRange)
    const body = fileOf(location, pinned).createReadStream({ start: asked?.start, end: asked?.end, decompress: false, validation: false })
    const answered = new Promise<IncomingMessage>((resolve, reject) => {
      body.once('response', resolve).once('error', reject)
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true })
    })
    body.read(0) // the request starts on the first read
    let response: IncomingMessage
    try {
      response = await answered
    } catch (err) {
      body.destroy()
      throw err
    }
    const status = response.statusCode ?? 0
    if (status === 416 && asked !== undefined) { // "bytes=0-" of an empty object: the whole of it, as a server ignoring Range
      body.destroy()
      return download(location, { ifRange, signal })
    }
    if (status >= 300) {
      body.on('error', () => {}).destroy()
      // A generation read before that is gone: the object was replaced or deleted while it was read.
      if (status === 404 && pinned !== undefined) throw storeErrors.changed(location)
      throw Object.assign(new Error('GCS answered'), { code: status })
    }
    const { headers } = response
    const part = status === 206 ? parseContentRange(headers['content-range']) : undefined
    const size = part?.size ?? Number(headers['content-length'] ?? 0)
    const generation = headers['x-goog-generation']
    return storeAnswer(body, {
      size,
      etag: etagOf(typeof generation === 'string' ? generation : pinned),
      lastModified: headers['last-modified'] === undefined ? undefined : new Date(headers['last-modified']),
      contentType: headers['content-type']
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

    async close () {}
  }
}
