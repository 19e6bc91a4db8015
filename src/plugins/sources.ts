// Intake of job sources, in the three forms every job route takes: a raw media body, a multipart upload
// (part "file"; option fields before it) or JSON { "url": ..., ...options }. All three end in the same
// spool with the same limits. Raw bodies are taken as a stream (the content-type parser only passes it
// on), so options are validated and admission decided before a single body byte is read.
import { finished, type Readable } from 'node:stream'
import multipart, { type Multipart, type MultipartFile } from '@fastify/multipart'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Static, TObject } from 'typebox'
import type { Config } from '../config.ts'
import { errors } from '../errors.ts'
import { createFetcher } from '../sources/fetch-source.ts'
import { nextOrAbort, spool, type DigestAlgorithm, type SpooledSource } from '../sources/spool.ts'
import { createOrigins } from '../sources/origins.ts'
import { startRangeReader } from '../sources/range-reader.ts'
import { createUrlFetch, type FetchOptions, type SpoolWithLimits } from '../sources/url-fetch.ts'
import { parseAllowedSources } from '../sources/url-policy.ts'
import { createStores, type Stores } from '../stores/registry.ts'
import { optionsError } from '../routes/options-error.ts'
import type { JobSource } from '../../contract/types.ts'

export interface TakeOptions<T extends TObject> {
  /** Digests to compute while the source streams in (sha256 always is), from the validated options. */
  algorithms?: (options: Static<T>) => readonly DigestAlgorithm[]
  /** Accept bytes that are no media thumbd reads (source.media is then undefined). */
  anyBytes?: boolean
  /** A large remote video may stay where it is, read by ranges (FetchOptions.remoteVideos). */
  remoteVideos?: boolean
  /** A source that ends in memory is hashed by its image job, not before it (SpoolLimits.hashInJob). */
  hashInJob?: boolean
}

export interface Taken<T extends TObject> {
  source: SpooledSource
  /** Query options merged with those of the JSON body or multipart fields (which win), validated. */
  options: Static<T>
}

declare module 'fastify' {
  interface FastifyRequest {
    spooled: SpooledSource | null
  }
  interface FastifyInstance {
    /** The stores by scheme (s3, gs, abs, local), made on first use: for sources, the result store and job outputs. */
    stores: Stores
    sources: {
      /** The request's source, spooled; its temp file is removed when the reply ends, whatever happened. */
      take<T extends TObject> (request: FastifyRequest, reply: FastifyReply, optionsSchema: T, takeOptions?: TakeOptions<T>): Promise<Taken<T>>
      /** A URL source (http(s) or a store URL) fetched and spooled for work that no one request owns (signed GET URLs): the caller disposes it. */
      fetchUrl (url: string, signal?: AbortSignal, options?: FetchOptions): Promise<SpooledSource>
    }
  }
}

/** Content types taken as raw media bodies; what they really are is sniffed, never trusted. */
export const RAW_MEDIA_TYPES = /^(?:image\/[\w.+-]+|video\/[\w.+-]+|audio\/[\w.+-]+|application\/octet-stream)$/i

/** What a request that sent its media some other way is told (plugins/error-handler.ts says it too). */
export const HOW_TO_SEND = 'send the media as the request body (Content-Type image/*, video/*, audio/* or application/octet-stream), a multipart "file" part, or JSON {"url": ...}'

/** Multipart: one file, a few small option fields. */
const MAX_FIELDS = 20
const MAX_FIELD_BYTES = 1024

export default fp<{ config: Config }>(async (app, { config }) => {
  // busboy stops a file one byte past the limit; spool() then answers 413 with the catalogue code.
  await app.register(multipart, { limits: { fileSize: config.maxSourceBytes + 1, files: 1, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES, parts: MAX_FIELDS + 1 } })
  app.addContentTypeParser(RAW_MEDIA_TYPES, (_request, payload, done) => done(null, payload))
  // No job takes text: a text body of any size gets the 415 that says how to send media, unread.
  app.removeContentTypeParser('text/plain')

  const fetcher = createFetcher({
    policy: { allowPrivate: config.allowPrivateSources, allowedPrefixes: parseAllowedSources(config.allowedSources) },
    timeoutMs: config.fetchTimeoutMs,
    maxBytes: config.maxSourceBytes
  })
  app.addHook('onClose', () => fetcher.close())
  // Stores are a second kind of origin behind the same fetch: everything after it (first range, range reader,
  // spool, limits) is shared.
  const stores = createStores(config.stores)
  app.addHook('onClose', () => stores.close())
  const origins = createOrigins(fetcher.fetchSource, stores, config.maxSourceBytes)
  // Range reads need a decoder that may connect to the reader's port and nowhere else (native/sandbox.c).
  const rangeReader = config.maxRangeRequests > 0 && config.maxRangeBytes > 0 && app.mediaTools.portConfinement
    ? await startRangeReader({
      fetch: origins.fetch,
      maxBytes: config.maxRangeBytes,
      maxRequests: config.maxRangeRequests,
      timeoutMs: config.fetchTimeoutMs,
      onFetch: bytes => {
        app.metrics.rangeRequests.inc()
        app.metrics.rangeBytes.inc(bytes)
      }
    })
    : undefined
  if (rangeReader === undefined && config.maxRangeRequests > 0) app.log.warn('remote videos are downloaded whole: the decoder sandbox here cannot confine a socket to one port (needs native/thumbd-sandbox-exec and Landlock ABI >= 4)')
  app.addHook('onClose', async () => { await rangeReader?.close() })

  app.decorateRequest('spooled', null)
  // The temp file goes before the reply does, so a client never sees its answer while the file remains.
  app.addHook('onSend', async (request) => {
    await request.spooled?.dispose()
  })

  async function take<T extends TObject> (request: FastifyRequest, reply: FastifyReply, optionsSchema: T, { algorithms, anyBytes, remoteVideos, hashInJob }: TakeOptions<T> = {}): Promise<Taken<T>> {
    const query = request.query as Record<string, unknown>
    const digesting = (options: Record<string, unknown>) => ({ algorithms: algorithms?.(options as Static<T>), anyBytes, hashInJob })
    let options: Record<string, unknown>
    let source: SpooledSource
    let trailingParts: (() => Promise<void>) | undefined
    if (request.isMultipart()) {
      const parts = request.parts()
      const { fields, file } = await leadingFieldsAndFile(parts, request.bodyTooSlow)
      options = validate(request, optionsSchema, { ...query, ...fields })
      source = await spoolWithLimits(file.file, { ...digesting(options), signal: request.bodyTooSlow })
      // Fields after the file would apply or not depending on how far parsing got: always refused.
      trailingParts = async () => {
        if (!(await parts.next()).done) throw new errors.BadOptions('option fields must come before the file part')
      }
    } else if (isUrlBody(request.body)) {
      const { url, ...rest } = request.body
      options = { ...query, ...rest }
      source = await fetchUrl(url, request.clientGone, { ...digesting(options), remoteVideos })
    } else {
      const declared = request.headers['content-length'] === undefined ? undefined : Number(request.headers['content-length'])
      if (declared !== undefined && declared > config.maxSourceBytes) throw new errors.PayloadTooLarge(`the source is more than ${config.maxSourceBytes} bytes (MAX_SOURCE_BYTES)`)
      const body = request.body as Readable | undefined
      if (body === undefined || typeof body.pipe !== 'function') throw new errors.UnsupportedMedia(HOW_TO_SEND)
      options = query
      source = await spoolWithLimits(body, { ...digesting(options), declaredBytes: declared, signal: request.bodyTooSlow })
    }
    request.spooled = source
    // A remote video's failed range read ends the job at once, with the source's error rather than the decoder's.
    if (source.failed !== undefined) request.jobOptions = { signal: AbortSignal.any([request.jobOptions.signal!, source.failed]) }
    await trailingParts?.()
    // For replies that never reach onSend (the client left first).
    finished(reply.raw, () => {
      source.dispose().catch(err => request.log.error({ err }, 'could not remove a temp file'))
    })
    return { source, options: options as Static<T> }
  }

  const spoolWithLimits: SpoolWithLimits = (stream, limits) =>
    spool(stream, { ...limits, maxBytes: config.maxSourceBytes, memoryBytes: config.memorySpoolBytes, tempDir: app.tempDir, runDigestTask: app.runDigestTask })
  const fetchUrl = createUrlFetch({ config, origins, rangeReader, spoolWithLimits, onShed: () => app.metrics.shed.inc({ reason: 'fetches' }) })

  app.decorate('stores', stores)
  app.decorate('sources', { take, fetchUrl })
}, { name: 'sources', dependencies: ['temp-files', 'lifecycle', 'digests', 'slow-clients', 'media-tools', 'metrics'] })

/** The part of a spooled source a job takes; the caller has ensured it is media. */
export function jobSource ({ ref, media, size }: SpooledSource): JobSource {
  if (media === undefined || ref.location === 'discarded') throw new errors.UnsupportedMedia('not an image or video format thumbd reads')
  return { ref, media, size }
}

/** A parsed JSON body: a plain object (a raw body is a stream, and IncomingMessage has a `url` of its own). */
function isUrlBody (body: unknown): body is { url: string } & Record<string, unknown> {
  return typeof body === 'object' && body !== null && Object.getPrototypeOf(body) === Object.prototype &&
    typeof (body as { url?: unknown }).url === 'string'
}

/** The option fields before the file part, and that part; a repeated field is an error, not a silent pick. */
async function leadingFieldsAndFile (parts: AsyncIterableIterator<Multipart>, signal: AbortSignal): Promise<{ fields: Record<string, unknown>, file: MultipartFile }> {
  const fields: Record<string, unknown> = {}
  for (;;) {
    const { value: part, done } = await nextOrAbort(parts, signal)
    if (done === true || (part.type === 'file' && part.fieldname !== 'file')) break
    if (part.type === 'file') return { fields, file: part }
    if (part.fieldname in fields) throw new errors.BadOptions(`field ${part.fieldname} is repeated`)
    fields[part.fieldname] = part.value
  }
  throw new errors.BadOptions('a multipart upload needs its file in a part named "file"')
}

/** Multipart fields are strings: validated (and coerced) against the same schema as the query. */
function validate (request: FastifyRequest, schema: TObject, data: Record<string, unknown>): Record<string, unknown> {
  const check = request.compileValidationSchema(schema, 'querystring')
  if (!check(data)) throw optionsError(check.errors)
  return data
}
