import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { errors } from '../errors.ts'
import { ImageQuery, VideoQuery, imageOptions, sourceBody, videoOptions } from './options.ts'
import { entityTag, notModified, sendImage } from './image-reply.ts'

/** Default thumbnail: 320 px wide JPEG, height from the aspect ratio. */
const DEFAULTS = { width: 320, format: 'jpeg' } as const
const Options = Type.Object({ ...ImageQuery, ...VideoQuery }, { additionalProperties: false })

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/thumbnail', {
    schema: {
      summary: 'Thumbnail of an image or of a video frame',
      querystring: Options,
      body: sourceBody(Options)
    }
  }, async (request, reply) => {
    const { source, options } = await app.sources.take(request, reply, Options)
    const { options: image, negotiated } = imageOptions(options, request.headers.accept, DEFAULTS)
    const video = videoOptions(options)
    const { ref, media, size, sha256 } = source
    if (media.kind === 'video' && !app.mediaTools.video) throw new errors.VideoUnavailable(app.mediaTools.missing.join(', ') + ' not found')
    const etag = entityTag(sha256, 'thumbnail', media.kind === 'video' ? { image, video } : { image })
    if (notModified(request, reply, etag, negotiated)) return reply.send()
    const result = await app.jobs.run({ kind: 'thumbnail', source: { ref, media, size }, image, video }, request.clientGone)
    return sendImage(reply, result, etag, negotiated)
  })
}

export default routes
