import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { errors } from '../errors.ts'
import { jobSource } from '../plugins/sources.ts'
import { answerWithImage, hashInJob } from './image-reply.ts'
import { ResizeQuery, imageOptions, sameFormat } from './options.ts'
import { IMAGE_REPLY, jobRoute } from './schemas.ts'

/** The route's options: a job's variant output derives from them (src/batch/spec.ts). */
export const ResizeOptions = Type.Object(ResizeQuery, { additionalProperties: false })

const DOC = {
  summary: 'Resize or convert an image',
  description: 'Fit, crop (gravity or smart crop), convert and re-encode. Always auto-oriented and metadata stripped; an sRGB profile is dropped, another RGB profile (Display P3) kept on the output, CMYK and grey converted to sRGB. Animated GIF/WebP: first frame.'
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/resize', jobRoute('resize', { ...DOC, options: ResizeOptions, ok: IMAGE_REPLY }), async (request, reply) => {
    const { source, options } = await app.sources.take(request, reply, ResizeOptions, { hashInJob: hashInJob(request) })
    const job = jobSource(source)
    if (job.media.kind !== 'image') throw new errors.UnsupportedMedia('resize takes images; use /api/thumbnail for videos')
    const { options: image, negotiated } = imageOptions(options, request.headers.accept, { format: sameFormat(job.media) })
    return answerWithImage(app, request, reply, { identity: source.identity, task: { kind: 'resize', source: job, image }, etagOptions: image, negotiated })
  })
}

export default routes
