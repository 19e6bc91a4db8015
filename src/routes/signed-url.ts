// GET /i/{signature}/{options...}/plain/{source}[@ext] and /i/{signature}/{options...}/{base64url source}[.ext]:
// a thumbnail or resize of a URL source that a browser can embed and a CDN can cache, in imgproxy's URL
// dialect and signature scheme (src/signed-urls/). No bearer key: the signature is the credential. The
// source goes through the same guarded fetch, sniffing, limits, pool and admission as a POSTed URL, and
// identical URLs asked at once share one fetch and one job (signed-urls/shared-work.ts).
import { readFile } from 'node:fs/promises'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { Config } from '../config.ts'
import { errors } from '../errors.ts'
import { jobSource } from '../plugins/sources.ts'
import { MAX_PATH_LENGTH, normalisedOptions, parseProcessingPath, redenormalizePath, UrlOptionError, type ParsedPath, type ThumbdUrlOptions } from '../signed-urls/parse.ts'
import type { SpooledSource } from '../sources/spool.ts'
import { createResultMemo } from '../signed-urls/result-memo.ts'
import { resultKey } from '../result-store/key.ts'
import { keepAfterSent, lookUp, sendKept } from '../result-store/reply.ts'
import { createSharedWork } from '../signed-urls/shared-work.ts'
import { mismatchReason, signerOf, type SigningKey } from '../signed-urls/signature.ts'
import { safeFileName } from './file-name.ts'
import { entityTag, hashInJob, identityAfterJob, notModified, sendImage } from './image-reply.ts'
import { negotiate, sameFormat, videoOptions } from './options.ts'
import { errorResponses, IMAGE_REPLY } from './schemas.ts'
import { sharedStop, urlQuality, videoReplies } from './signed-url-video.ts'
import { sourceSha256 } from '../../contract/digest.ts'
import type { ImageOptions, OutputFormat, UrlOps } from '../../contract/types.ts'

const PREFIX = '/i/'

/** What the worker does for a GET URL: imgproxy's sizing, and the quality q, fq or FORMAT_QUALITY give the format. */
function imageOptions (options: ThumbdUrlOptions, format: OutputFormat, defaults: Config['formatQuality']): ImageOptions {
  const type = options.autoFit === true ? 'auto' : options.fillDown === true ? 'fill-down' : options.fit === 'cover' ? 'fill' : options.fit === 'fill' ? 'force' : 'fit'
  return {
    width: options.width,
    height: options.height,
    fit: options.fit,
    position: options.position,
    background: options.background === undefined ? undefined : `#${options.background}`,
    format,
    quality: urlQuality(options, format, defaults),
    withoutEnlargement: options.withoutEnlargement,
    url: { type, enlarge: !options.withoutEnlargement, dpr: options.dpr ?? 1, zoom: options.zoom ?? [1, 1], minWidth: options.minWidth, minHeight: options.minHeight, gravity: options.gravity, ops: urlOps(options) },
    ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
    ...(options.animated === false ? { animated: false } : {})
  }
}

/** imgproxy's image operations, if the URL asks for any. */
function urlOps ({ crop, rotate, flip, blur, sharpen, padding, extend, extendAspect }: ThumbdUrlOptions): UrlOps | undefined {
  const ops: UrlOps = { crop, rotate, flip, blur, sharpen, padding, extend, extendAspect }
  const set = Object.entries(ops).filter(([, value]) => value !== undefined)
  return set.length === 0 ? undefined : Object.fromEntries(set)
}

/** fn and att: Content-Disposition as imgproxy sends it, the name's extension that of the reply. */
function disposition (reply: FastifyReply, options: ThumbdUrlOptions, source: string, format: string): void {
  if (options.filename === undefined && options.attachment === undefined) return
  const base = safeFileName(options.filename ?? lastSegment(source).replace(/\.[^.]*$/, '')) ?? 'image'
  const name = `${base}.${format === 'jpeg' ? 'jpg' : format}`
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_')
  reply.header('content-disposition', `${options.attachment === true ? 'attachment' : 'inline'}; filename="${ascii}"${ascii === name ? '' : `; filename*=UTF-8''${encodeURIComponent(name)}`}`)
}

/** The source URL's last path segment, decoded where it decodes (a stray '%' stays as it is). */
function lastSegment (source: string): string {
  const segment = new URL(source).pathname.split('/').pop() ?? ''
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** A spooled source's bytes, from memory or its temp file. */
async function sourceBytes (fetched: SpooledSource): Promise<Buffer> {
  const { ref } = jobSource(fetched)
  if (ref.location === 'memory') return Buffer.from(ref.bytes.buffer, ref.bytes.byteOffset, ref.bytes.byteLength)
  if (ref.location === 'file') return readFile(ref.path)
  throw new errors.BadOptions('skip_processing takes images, not remote videos')
}

/** The signature, and the path it signs (from its '/'), as sent: no query string (a source's '?' is percent-encoded). */
function splitSigned (url: string): { signature: string, path: string } {
  if (url.includes('?')) throw new errors.BadOptions('percent-encode the source URL: a GET URL takes no query string')
  if (url.length > PREFIX.length + MAX_PATH_LENGTH + 64) throw new errors.BadOptions('the URL is too long')
  const slash = url.indexOf('/', PREFIX.length)
  if (slash < 0) throw new errors.BadOptions('expected /i/{signature}/{options}/{source}')
  return { signature: url.slice(PREFIX.length, slash), path: url.slice(slash) }
}

function parse (path: string, presets: Config['urlPresets']): ParsedPath {
  try {
    return parseProcessingPath(path, presets)
  } catch (err) {
    if (err instanceof UrlOptionError) throw new errors.BadOptions(err.message)
    throw err
  }
}

const routes: FastifyPluginAsync<{ config: Config }> = async (app, { config }) => {
  const shared = createSharedWork()
  const memo = createResultMemo({ maxBytes: config.resultCacheBytes, ttlMs: config.resultCacheSeconds * 1000 })
  const cacheControl = `public, max-age=${config.urlCacheMaxAgeSeconds}`
  const { storyboardReply, previewReply } = videoReplies(app, { shared, config, cacheControl })

  /** The pair that signed the path, or 'insecure' (where allowed): a URL the reply hands out is signed the same way, never better. */
  function checkSignature (signature: string, path: string): SigningKey | 'insecure' {
    if (signature === 'insecure') {
      if (!config.allowUnsignedUrls) throw new errors.BadSignature('unsigned URLs are off (ALLOW_UNSIGNED_URLS)')
      return 'insecure'
    }
    // imgproxy signs the path as proxies and browsers may have rewritten it back (%3A, http:/).
    const signer = signerOf(signature, redenormalizePath(path), config.urlSigning)
    if (signer === undefined) throw new errors.BadSignature(mismatchReason(config.urlSigning))
    return signer
  }

  app.get('/i/*', {
    config: { jobKind: 'thumbnail' },
    schema: {
      summary: 'Thumbnail or resize of a URL source, by a signed GET URL in imgproxy\'s dialect',
      description: 'GET /i/{signature}/{options…}/plain/{percent-encoded source}[@ext] or /i/{signature}/{options…}/{base64url source}[.ext]. Signature: base64url (no padding) HMAC-SHA256 of salt + path, keys and salts hex (URL_SIGNING_KEYS, URL_SIGNING_SALTS). Options, with imgproxy\'s semantics (a later one overrides an earlier one): rs, s, rt, w, h, el, dpr, z, mw, mh, g (offsets, fp, sm), c, ex, exar, pd, rot, fl, bl, sh, q, fq, mb, f/ext (gif too; no format: a GIF source answers GIF), bg, sm, ar, skp, exp, fn, att, cb, pr (URL_PRESETS), vts, at, frame, da (disable_animation: an animated source\'s still first frame), vtt (video_thumbnail_tile: a storyboard sprite; its WebVTT with the .vtt extension), vta (video_thumbnail_animation: a looping WebP/GIF preview of a video). No bearer key.',
      tags: ['jobs'],
      response: { 200: IMAGE_REPLY, 304: { description: 'Not modified (If-None-Match matched the ETag)', type: 'null' }, ...errorResponses(['NOT_FOUND', 'UNAUTHORIZED', 'REQUEST_TIMEOUT']) }
    }
  }, async (request, reply) => {
    const { signature, path } = splitSigned(request.raw.url ?? '')
    const signer = checkSignature(signature, path)
    // The extension, if any, is in options.format already.
    const { source, extension, options } = parse(path, config.urlPresets)
    // As imgproxy: an expired URL is a 404, before anything is fetched.
    if (options.expires !== undefined && options.expires * 1000 < Date.now()) throw new errors.UrlExpired(`it expired at ${new Date(options.expires * 1000).toISOString()}`)
    if (options.storyboard !== undefined) return storyboardReply(request, reply, { path, extension, source, options, signer })
    if (options.preview !== undefined) return previewReply(request, reply, { path, source, options })
    if (options.format === 'vtt') throw new errors.BadOptions('a .vtt is the WebVTT of a storyboard: add video_thumbnail_tile')
    const asked = options.format
    const negotiated = asked === 'auto'
    const format: OutputFormat | undefined = asked === 'auto' ? negotiate(request.headers.accept) : asked
    // By the path as signed: the spellings of it that proxies make (%3A, http:/, extra leading '/') share the work.
    const key = `${redenormalizePath(path)}\n${format ?? ''}`
    const video = videoOptions({ at: options.at, frame: options.frame })
    const memoised = memo.get(key)
    app.metrics.resultMemo.inc({ outcome: memoised === undefined ? 'miss' : 'hit' })
    if (memoised !== undefined) return sendKept(request, reply, memoised, { negotiated, cacheControl })
    // The result store (RESULT_STORAGE) that replicas share: by what the reply is made of, not by signature.
    const storeKey = app.resultStore === undefined ? undefined : resultKey({ kind: 'image', source, options: normalisedOptions(options), format: format ?? '', defaultQuality: config.formatQuality })
    const stored = await lookUp(app, storeKey)
    if (stored !== undefined) {
      memo.set(key, stored.kept)
      return sendKept(request, reply, stored.kept, { negotiated, cacheControl, timing: stored.timing })
    }
    const etagOf = (identity: string) => entityTag(identity, 'url', { ...normalisedOptions(options), format, defaultQuality: config.formatQuality })
    return shared.withShared(key, request.clientGone, async (signal) => {
      // Hashed by its job when the request that starts the work needs no ETag before it (skip_processing
      // sends the source itself): the others that join take the ETag from the job's result, a 304 included.
      const fetched = await app.sources.fetchUrl(source, signal, { remoteVideos: true, hashInJob: hashInJob(request) && options.skipProcessing === undefined })
      return { source: fetched, etag: fetched.identity === undefined ? undefined : etagOf(fetched.identity) }
    }, ({ source: fetched }, signal) => {
      const job = jobSource(fetched)
      if (job.media.kind !== 'image') app.mediaTools.assertVideo()
      const image = imageOptions(options, format ?? (job.media.kind === 'image' ? sameFormat(job.media) : 'jpeg'), config.formatQuality)
      // Shared: it stops when every client waiting for it has left (or at the deadline, or on a remote video's failed range read).
      const stop = sharedStop(signal, fetched.failed)
      return job.media.kind === 'image' ? app.jobs.run({ kind: 'resize', source: job, image }, stop) : app.jobs.run({ kind: 'thumbnail', source: job, image, video }, stop)
    }, async ({ etag: shared, source: fetched }, image) => {
      // A conditional request that joined work whose job hashes its source (a revalidation racing a first
      // fetch: rare) hashes the bytes here, so that its 304 waits for no job and shares no job's failure.
      const known = shared ?? (!hashInJob(request) && fetched.ref.location === 'memory' ? etagOf(sourceSha256(fetched.ref.bytes)) : undefined)
      if (known !== undefined && notModified(request, reply, known, negotiated, cacheControl)) return reply.send()
      const media = fetched.media
      // skip_processing: a source of a listed format goes out as it came (imgproxy's skp).
      if (media?.kind === 'image' && options.skipProcessing?.includes(media.format)) {
        disposition(reply, options, source, media.format)
        return reply.header('content-type', media.mime).header('etag', etagOf(fetched.identity!)).header('cache-control', cacheControl).send(await sourceBytes(fetched))
      }
      const result = await image()
      const etag = known ?? etagOf(identityAfterJob(fetched.identity, result))
      if (known === undefined && notModified(request, reply, etag, negotiated, cacheControl)) return reply.send()
      disposition(reply, options, source, result.value.format)
      const { data, format: made } = result.value
      const disposed = reply.getHeader('content-disposition')
      const kept = { etag, body: Buffer.from(data.buffer, data.byteOffset, data.byteLength), headers: { 'content-type': `image/${made}`, ...(typeof disposed === 'string' ? { 'content-disposition': disposed } : {}) } }
      memo.set(key, kept)
      keepAfterSent(app, reply, storeKey, kept)
      return sendImage(reply, result, etag, negotiated, cacheControl)
    })
  })
}

export default routes
