import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { jobSource } from '../plugins/sources.ts'
import { ImageQuery, VideoQuery, imageOptions, videoOptions } from './options.ts'
import { IMAGE_REPLY, jobRoute } from './schemas.ts'
import { answerWithImage, hashInJob } from './image-reply.ts'

/** Default thumbnail: 320 px wide JPEG, height from the aspect ratio. */
const DEFAULTS = { width: 320, format: 'jpeg' } as const
/** The route's options: POST /api/thumbnail validates them, a job's still output derives from them (src/batch/spec.ts). */
export const ThumbnailOptions = Type.Object({ ...ImageQuery, ...VideoQuery }, { additionalProperties: false })

const DOC = {
  summary: 'Thumbnail of an image or of a video frame',
  description: 'Default: 320 px wide JPEG. Images are auto-oriented and stripped of metadata; for videos, options `at` and `frame` pick the frame.'
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/thumbnail', jobRoute('thumbnail', { ...DOC, options: ThumbnailOptions, ok: IMAGE_REPLY }), async (request, reply) => {
    const { source, options } = await app.sources.take(request, reply, ThumbnailOptions, { remoteVideos: true, hashInJob: hashInJob(request) })
    const { options: image, negotiated } = imageOptions(options, request.headers.accept, DEFAULTS)
    const video = videoOptions(options)
    const job = jobSource(source)
    if (job.media.kind !== 'image') app.mediaTools.assertVideo()
    return answerWithImage(app, request, reply, {
      identity: source.identity,
      task: { kind: 'thumbnail', source: job, image, video },
      etagOptions: job.media.kind === 'video' ? { image, video } : { image },
      negotiated
    })
  })
}

export default routes
