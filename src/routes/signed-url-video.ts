// The GET dialect's video replies (src/routes/signed-url.ts hands them the parsed URL): video_thumbnail_tile,
// a storyboard's sprite or its WebVTT, and video_thumbnail_animation, a looping preview. Like the image
// replies, identical URLs asked at once share one fetch and one job.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.ts'
import { errors } from '../errors.ts'
import { jobSource } from '../plugins/sources.ts'
import { normalisedOptions, redenormalizePath, type ParsedPath, type ThumbdUrlOptions } from '../signed-urls/parse.ts'
import type { createSharedWork } from '../signed-urls/shared-work.ts'
import { signedUrlPath, type SigningKey } from '../signed-urls/signature.ts'
import { entityTag, notModified, sendImage } from './image-reply.ts'
import { resultKey } from '../result-store/key.ts'
import { keepAfterSent, lookUp, sendKept } from '../result-store/reply.ts'
import { negotiate, videoOptions } from './options.ts'
import { webVtt } from './storyboard.ts'
import { DEFAULT_QUALITY } from '../../contract/limits.ts'
import type { OutputFormat } from '../../contract/types.ts'

const VTT = 'text/vtt; charset=utf-8'
/** Where a kept .vtt's sprite URL goes (braces never appear in a signed URL's path): each hit puts its own there. */
const SPRITE_STAND_IN = '{thumbd-sprite-url}'

/** The quality q, fq or FORMAT_QUALITY give a format (80 for one none names). */
export function urlQuality (options: ThumbdUrlOptions, format: OutputFormat, defaults: Config['formatQuality']): number {
  return options.quality ?? options.formatQuality?.[format as keyof Config['formatQuality']] ?? defaults[format as keyof Config['formatQuality']] ?? DEFAULT_QUALITY
}

/** What stops a shared job: its last client leaving, or its remote source failing. */
export const sharedStop = (stopped: AbortSignal, failed: AbortSignal | undefined) => ({ signal: failed === undefined ? stopped : AbortSignal.any([stopped, failed]) })

/** The storyboard and preview replies of one route instance: its shared work, config and Cache-Control. */
export function videoReplies (app: FastifyInstance, { shared, config, cacheControl }: { shared: ReturnType<typeof createSharedWork>, config: Config, cacheControl: string }) {
  /**
   * video_thumbnail_tile: the sprite sheet as an image (JPEG, or WebP), or with .vtt the WebVTT whose cues point
   * at that sprite's own signed URL (the same path, .jpg): two URLs a CDN caches and a player reads.
   */
  async function storyboardReply (request: FastifyRequest, reply: FastifyReply, { path, extension, source, options, signer }: Pick<ParsedPath, 'extension' | 'source' | 'options'> & { path: string, signer: SigningKey | 'insecure' }) {
    const board = options.storyboard!
    const asked = options.format ?? 'jpeg'
    if (asked !== 'jpeg' && asked !== 'webp' && asked !== 'vtt') throw new errors.BadOptions('a storyboard\'s sprite is jpg or webp (or .vtt for its cues)')
    if (asked === 'vtt' && extension === undefined) throw new errors.BadOptions('ask for a storyboard\'s cues with the .vtt extension (its sprite is the same URL with .jpg)')
    const format = asked === 'vtt' ? 'jpeg' : asked
    // A .vtt is kept with a stand-in for its sprite's URL, which each hit signs as its own request was signed.
    const storeKey = app.resultStore === undefined ? undefined : resultKey({ kind: 'storyboard', source, options: normalisedOptions(options), format: asked, defaultQuality: config.formatQuality })
    const stored = await lookUp(app, storeKey)
    if (stored !== undefined) {
      const body = asked === 'vtt' ? Buffer.from(stored.kept.body.toString().replaceAll(SPRITE_STAND_IN, spriteUrl(path, extension!, signer))) : stored.kept.body
      return sendKept(request, reply, { ...stored.kept, body }, { negotiated: false, cacheControl, timing: stored.timing })
    }
    return shared.withShared(`${redenormalizePath(path)}\n${asked}`, request.clientGone, async (signal) => {
      const fetched = await app.sources.fetchUrl(source, signal, { remoteVideos: true })
      return { source: fetched, etag: entityTag(fetched.identity, 'storyboard', { ...normalisedOptions(options), format: asked, defaultQuality: config.formatQuality }) }
    }, ({ source: fetched }, signal) => {
      const job = jobSource(fetched)
      if (job.media.kind !== 'video') throw new errors.UnsupportedMedia('storyboards are made of videos')
      app.mediaTools.assertVideo()
      return app.jobs.run({
        kind: 'storyboard',
        source: job,
        ...(board.step === undefined ? { count: board.columns * board.rows } : { interval: board.step }),
        columns: board.columns,
        tileWidth: board.tileWidth,
        format,
        // The sprite's quality as a GET URL's image of its format: q, fq or FORMAT_QUALITY.
        quality: urlQuality(options, format, config.formatQuality)
      }, sharedStop(signal, fetched.failed))
    }, async ({ etag }, storyboard) => {
      if (notModified(request, reply, etag, false, cacheControl)) return reply.send()
      const result = await storyboard()
      if (asked !== 'vtt') {
        keepAfterSent(app, reply, storeKey, { etag, headers: { 'content-type': `image/${result.value.format}` }, body: Buffer.from(result.value.sprite.buffer, result.value.sprite.byteOffset, result.value.sprite.byteLength) })
        return sendImage(reply, { ...result, value: { ...result.value, data: result.value.sprite } }, etag, false, cacheControl)
      }
      const sprite = spriteUrl(path, extension!, signer)
      keepAfterSent(app, reply, storeKey, { etag, headers: { 'content-type': VTT }, body: Buffer.from(webVtt(result.value, SPRITE_STAND_IN)) })
      return reply.header('content-type', VTT).header('etag', etag).header('cache-control', cacheControl).send(webVtt(result.value, sprite))
    })
  }

  /**
   * video_thumbnail_animation (imgproxy Pro's vta): a looping preview of the video, animated WebP (default, and
   * for auto when Accept takes it) or GIF (@gif, or auto without WebP); vts sets where it starts.
   */
  async function previewReply (request: FastifyRequest, reply: FastifyReply, { path, source, options }: Pick<ParsedPath, 'source' | 'options'> & { path: string }) {
    const asked = options.format ?? 'webp'
    if (asked !== 'webp' && asked !== 'gif' && asked !== 'auto') throw new errors.BadOptions('a video_thumbnail_animation is webp or gif')
    const format = asked === 'auto' ? (negotiate(request.headers.accept) === 'jpeg' ? 'gif' : 'webp') : asked
    const { step, delay, frames, frameWidth, frameHeight, fit, trim } = options.preview!
    const storeKey = app.resultStore === undefined ? undefined : resultKey({ kind: 'preview', source, options: normalisedOptions(options), format, defaultQuality: config.formatQuality })
    const stored = await lookUp(app, storeKey)
    if (stored !== undefined) return sendKept(request, reply, stored.kept, { negotiated: asked === 'auto', cacheControl, timing: stored.timing })
    return shared.withShared(`${redenormalizePath(path)}\n${format}`, request.clientGone, async (signal) => {
      const fetched = await app.sources.fetchUrl(source, signal, { remoteVideos: true })
      return { source: fetched, etag: entityTag(fetched.identity, 'preview', { ...normalisedOptions(options), format, defaultQuality: config.formatQuality }) }
    }, ({ source: fetched }, signal) => {
      const job = jobSource(fetched)
      if (job.media.kind !== 'video') throw new errors.UnsupportedMedia('previews are made of videos')
      app.mediaTools.assertVideo()
      const start = videoOptions({ at: options.at }).at
      return app.jobs.run({
        kind: 'preview',
        source: job,
        frames,
        ...(start === undefined ? {} : { start }),
        ...(step === undefined ? {} : { step, trim }),
        ...(frameWidth === 0 ? {} : { width: frameWidth }),
        ...(frameHeight === 0 ? {} : { height: frameHeight }),
        fit,
        delay,
        format,
        // A WebP preview's quality as a GET URL's WebP: q, fq or FORMAT_QUALITY (GIF takes none).
        quality: urlQuality(options, format, config.formatQuality)
      }, sharedStop(signal, fetched.failed))
    }, async ({ etag }, animation) => {
      if (notModified(request, reply, etag, asked === 'auto', cacheControl)) return reply.send()
      const result = await animation()
      const { data } = result.value
      keepAfterSent(app, reply, storeKey, { etag, headers: { 'content-type': `image/${result.value.format}` }, body: Buffer.from(data.buffer, data.byteOffset, data.byteLength) })
      return sendImage(reply, result, etag, asked === 'auto', cacheControl)
    })
  }

  /**
   * The GET URL of a storyboard's sprite: the .vtt's own path (as signatures read it: redenormalised) ending in
   * .jpg (or @jpg), signed by the pair that signed the .vtt's URL, or unsigned for an unsigned one: a reply never
   * holds a signature its request did not already have the power to make.
   */
  function spriteUrl (path: string, extension: string, signer: SigningKey | 'insecure'): string {
    const normal = redenormalizePath(path)
    const spritePath = `${normal.slice(0, normal.length - extension.length)}jpg`
    return signer === 'insecure' ? `/i/insecure${spritePath}` : signedUrlPath(spritePath, signer.key, signer.salt)
  }

  return { storyboardReply, previewReply }
}
