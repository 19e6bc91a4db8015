import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { jobSource } from '../plugins/sources.ts'
import { jobRoute } from './schemas.ts'

const Options = Type.Object({}, { additionalProperties: false })

const InfoReply = Type.Object({
  kind: Type.Enum(['image', 'video', 'audio']),
  format: Type.String({ description: 'sniffed from the bytes: jpeg, png, webp, gif, avif, heic, mp4, mov, webm, mkv, avi' }),
  mime: Type.String(),
  size: Type.Integer({ description: 'bytes' }),
  container: Type.Optional(Type.String({ description: 'videos: the demuxer\'s name for the container' })),
  codec: Type.Optional(Type.String({ description: 'the video codec, or the image\'s coding' })),
  width: Type.Integer({ description: 'as displayed: after EXIF orientation or the video\'s rotation' }),
  height: Type.Integer(),
  duration: Type.Optional(Type.Number({ description: 'seconds (videos)' })),
  frameRate: Type.Optional(Type.Number({ description: 'frames per second (videos)' })),
  audio: Type.Optional(Type.Union([Type.Object({ codec: Type.String() }), Type.Null()], { description: 'videos: the first audio stream, or null' })),
  rotation: Type.Optional(Type.Integer({ description: 'videos: degrees clockwise the picture is turned for display' })),
  orientation: Type.Optional(Type.Integer({ description: 'images: EXIF orientation, 1-8' })),
  pages: Type.Optional(Type.Integer({ description: 'images: frames of an animation' })),
  hasAlpha: Type.Optional(Type.Boolean()),
  sampleAspectRatio: Type.Optional(Type.String({ description: 'videos: the stored pixels\' aspect ratio, e.g. "64:45" (width and height above are the display size, pixels made square)' })),
  bitDepth: Type.Optional(Type.Integer({ description: 'videos: bits per component of the decoded pixels (8, 10, 12, 16)' })),
  colorTransfer: Type.Optional(Type.String({ description: 'videos: the transfer tag as ffmpeg names it (bt709, smpte2084 for PQ, arib-std-b67 for HLG), when tagged' })),
  colorPrimaries: Type.Optional(Type.String({ description: 'videos: the primaries tag (bt709, bt2020 ...), when tagged' })),
  colorSpace: Type.Optional(Type.String({ description: 'videos: the YUV matrix tag (bt709, bt470bg, bt2020nc ...), when tagged' })),
  hdr: Type.Optional(Type.Boolean({ description: 'videos: PQ or HLG, tone-mapped to SDR in every picture thumbd makes' })),
  hasPicture: Type.Optional(Type.Boolean({ description: 'audio: whether the file carries cover art (width and height are its size, 0 without)' }))
})

const DOC = {
  summary: 'What a source is, without decoding a pixel',
  description: 'Kind, format, container, codecs, display size (after rotation, pixels made square), colour (bit depth, transfer, primaries, HDR), duration, frame rate, audio, orientation: for deciding what to ask for. Same sources and limits as every job route.'
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/info', jobRoute('info', { ...DOC, options: Options, ok: InfoReply }), async (request, reply) => {
    const { source } = await app.sources.take(request, reply, Options, { remoteVideos: true })
    const job = jobSource(source)
    if (job.media.kind !== 'image') app.mediaTools.assertVideo()
    const { value } = await app.jobs.run({ kind: 'info', source: job }, request.jobOptions)
    return reply.send({ ...value, mime: job.media.mime, size: source.size })
  })
}

export default routes
