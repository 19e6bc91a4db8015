// POST /api/preview: a short looping animation of N frames spread over a video, or over a window of it (the
// hover preview of video sites), as animated WebP (default) or GIF. Every source form, remote videos by ranges.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import { errors } from '../errors.ts'
import { jobSource } from '../plugins/sources.ts'
import { answerWithImage } from './image-reply.ts'
import { IMAGE_REPLY, jobRoute } from './schemas.ts'
import { videoOptions } from './options.ts'
import { DEFAULT_QUALITY, MAX_PREVIEW_FRAMES, MAX_PREVIEW_PIXELS, MAX_PREVIEW_SIDE } from '../../contract/limits.ts'
import type { JobSource, PreviewTask } from '../../contract/types.ts'

/** The route's options: a job's preview output takes them as they are (src/batch/spec.ts). */
export const PreviewOptions = Type.Object({
  frames: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PREVIEW_FRAMES, description: `frames of the animation (default 8; at most ${MAX_PREVIEW_FRAMES}, and MAX_ANIMATION_FRAMES)` })),
  width: Type.Optional(Type.Integer({ minimum: 16, maximum: MAX_PREVIEW_SIDE, description: 'frame width in px (default 320 when no height is given)' })),
  height: Type.Optional(Type.Integer({ minimum: 16, maximum: MAX_PREVIEW_SIDE, description: 'frame height in px' })),
  fit: Type.Optional(Type.Enum(['inside', 'cover', 'contain'], { description: 'with width and height: inside (default, the video\'s aspect), cover (crop to the box) or contain (pad with black)' })),
  at: Type.Optional(Type.String({ pattern: '^\\d{1,6}(\\.\\d{1,3})?%?$', description: 'where the window starts: seconds (12.5) or percent (10%); default 0' })),
  duration: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 604800, description: 'seconds of the window the frames are spread over (default: to the end)' })),
  delay: Type.Optional(Type.Integer({ minimum: 20, maximum: 10000, description: 'milliseconds each frame shows (default 500)' })),
  format: Type.Optional(Type.Enum(['webp', 'gif'], { description: 'animated WebP (default) or GIF' })),
  quality: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'WebP quality (default 80)' }))
}, { additionalProperties: false })

/** The options a preview takes, from the route or from a job's output. */
export type PreviewValues = Static<typeof PreviewOptions>

/** The preview task of these options, with the route's defaults: POST /api/preview and a job's preview output alike. */
export function previewTask (source: JobSource, options: PreviewValues): PreviewTask {
  return {
    kind: 'preview',
    source,
    frames: options.frames ?? 8,
    ...(options.at === undefined ? {} : { start: videoOptions({ at: options.at }).at! }),
    ...(options.duration === undefined ? {} : { duration: options.duration }),
    width: options.width ?? (options.height === undefined ? 320 : undefined),
    height: options.height,
    fit: options.fit ?? 'inside',
    delay: options.delay ?? 500,
    format: options.format ?? 'webp',
    quality: options.quality ?? DEFAULT_QUALITY
  }
}

const DOC = {
  summary: 'Looping animated preview of a video',
  description: `N frames spread evenly over the video (or over the window at..at+duration, each from the middle of its share), each scaled like a thumbnail, as a looping animated WebP or GIF. One seek per frame, keyframe seeks when frames are 2 s or more apart. At most ${MAX_PREVIEW_FRAMES} frames and ${MAX_PREVIEW_PIXELS} px over all frames.`
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/preview', jobRoute('preview', { ...DOC, options: PreviewOptions, ok: IMAGE_REPLY }), async (request, reply) => {
    const { source, options } = await app.sources.take(request, reply, PreviewOptions, { remoteVideos: true })
    const job = jobSource(source)
    if (job.media.kind !== 'video') throw new errors.UnsupportedMedia('previews are made of videos')
    app.mediaTools.assertVideo()
    const task = previewTask(job, options)
    const { source: _, kind, ...etagOptions } = task
    return answerWithImage(app, request, reply, { identity: source.identity, task, etagOptions, negotiated: false })
  })
}

export default routes
