// s3://bucket/key[?versionId=] through the AWS SDK v3, for AWS and S3-compatible servers (S3_ENDPOINT with
// S3_FORCE_PATH_STYLE: MinIO, R2, versitygw). Credentials come from the SDK's default chain (environment,
// shared profile, SSO, instance, task or web identity role): thumbd never takes an S3 key as a setting of its own.
// Imported only when the first s3:// URL is read (src/stores/registry.ts).
import type { Readable } from 'node:stream'
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, S3Client, type GetObjectCommandOutput } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { quoteEtag, storeAnswer } from '../answer.ts'
import { parseContentRange } from '../../sources/byte-ranges.ts'
import type { S3Settings } from '../settings.ts'
import { isOurs, storeErrors, type StoreFailure } from '../store-errors.ts'
import type { ObjectLocation, ObjectStore, ReadOptions, StoreAnswer } from '../store.ts'

/** What the SDK's errors carry: the service's error name, and its HTTP status in $metadata. */
function failureOf (err: unknown): StoreFailure {
  const e = err as { name?: string, code?: string, $metadata?: { httpStatusCode?: number } }
  return { name: e.code ?? e.name, status: e.$metadata?.httpStatusCode }
}

const MISSING = new Set(['NoSuchKey', 'NotFound', 'NoSuchVersion', 'NoSuchBucket'])

/** A client whose region is S3_REGION, else the SDK's chain (AWS_REGION, the profile), else us-east-1. */
async function makeClient (settings: S3Settings, timeoutMs: number): Promise<S3Client> {
  const options = {
    endpoint: settings.endpoint,
    forcePathStyle: settings.forcePathStyle,
    // One retry: the request's own deadline (FETCH_TIMEOUT_MS) bounds the whole read anyway.
    maxAttempts: 2,
    requestHandler: { connectionTimeout: Math.min(5000, timeoutMs), requestTimeout: timeoutMs }
  }
  if (settings.region !== undefined) return new S3Client({ ...options, region: settings.region })
  const client = new S3Client(options)
  try {
    await client.config.region()
    return client
  } catch {
    client.destroy()
    return new S3Client({ ...options, region: 'us-east-1' })
  }
}

export async function createS3Store (settings: S3Settings, timeoutMs: number): Promise<ObjectStore> {
  const client = await makeClient(settings, timeoutMs)
  const target = ({ bucket, key, versionId }: ObjectLocation) => ({ Bucket: bucket, Key: key, VersionId: versionId })

  function fail (location: ObjectLocation, err: unknown, signal?: AbortSignal): Error {
    if (isOurs(err)) return err
    const failure = failureOf(err)
    if (failure.status === 412) return storeErrors.changed(location)
    if (MISSING.has(failure.name ?? '') || failure.status === 404) return storeErrors.notFound(location)
    return storeErrors.failed(location, failure, signal)
  }

  async function get (location: ObjectLocation, { range, ifRange, signal }: ReadOptions): Promise<GetObjectCommandOutput> {
    // As If-Range, but refused rather than answered whole: the object must still have the ETag the first range had.
    const ifMatch = ifRange?.startsWith('"') === true ? ifRange : undefined
    // Without an ETag the validator is the Last-Modified date: the object must not have changed since.
    const ifUnmodifiedSince = ifRange !== undefined && ifMatch === undefined ? dateOf(ifRange) : undefined
    try {
      return await client.send(new GetObjectCommand({ ...target(location), Range: range, IfMatch: ifMatch, IfUnmodifiedSince: ifUnmodifiedSince }), { abortSignal: signal })
    } catch (err) {
      // "bytes=0-" of an empty object: as a server that ignores Range, the whole (empty) object.
      if (range !== undefined && failureOf(err).status === 416) return get(location, { ifRange, signal })
      throw err
    }
  }

  return {
    scheme: 's3',

    async read (location, options = {}): Promise<StoreAnswer> {
      try {
        const answer = await get(location, options)
        const size = parseContentRange(answer.ContentRange)?.size ?? answer.ContentLength ?? 0
        const range = answer.$metadata.httpStatusCode === 206 ? parseContentRange(answer.ContentRange) : undefined
        return storeAnswer(answer.Body as Readable, { size, etag: quoteEtag(answer.ETag), lastModified: answer.LastModified, contentType: answer.ContentType }, range)
      } catch (err) {
        throw fail(location, err, options.signal)
      }
    },

    async stat (location, signal) {
      try {
        const head = await client.send(new HeadObjectCommand(target(location)), { abortSignal: signal })
        return { size: head.ContentLength ?? 0, etag: quoteEtag(head.ETag), lastModified: head.LastModified, metadata: head.Metadata }
      } catch (err) {
        const failure = failureOf(err)
        if (failure.status === 404 || MISSING.has(failure.name ?? '')) return undefined
        throw fail(location, err, signal)
      }
    },

    async write (location, body, { contentType, cacheControl, metadata, signal }) {
      // A multipart upload for streams (their length is unknown): completed, or aborted and gone.
      const upload = new Upload({
        client,
        params: { Bucket: location.bucket, Key: location.key, Body: body, ContentType: contentType, CacheControl: cacheControl, Metadata: metadata },
        abortController: signal === undefined ? undefined : abortControllerOf(signal)
      })
      let size = 0
      upload.on('httpUploadProgress', progress => { size = Math.max(size, progress.loaded ?? 0) })
      try {
        const done = await upload.done()
        return { size: Buffer.isBuffer(body) ? body.length : size, etag: quoteEtag(done.ETag) }
      } catch (err) {
        throw fail(location, err, signal)
      }
    },

    async remove (location) {
      try {
        await client.send(new DeleteObjectCommand(target(location)))
      } catch (err) {
        const failure = failureOf(err)
        if (failure.status !== 404) throw fail(location, err)
      }
    },

    async close () {
      client.destroy()
    }
  }
}

/** An HTTP date, or undefined for anything else. */
function dateOf (value: string): Date | undefined {
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? undefined : date
}

/** lib-storage takes an AbortController, not a signal. */
function abortControllerOf (signal: AbortSignal): AbortController {
  const controller = new AbortController()
  if (signal.aborted) controller.abort(signal.reason)
  else signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true })
  return controller
}
