// POST /api/storyboard: a sprite sheet of video frames and the WebVTT that video players (video.js, Plyr,
// Vidstack, hls.js based players) read for scrub previews: each cue's text is `{sprite}#xywh=x,y,w,h`.
// The reply serves a one-request client and a CDN alike: one JSON with the sprite (base64) and the VTT
// whose cues point at `sprite`, the URL where the client will put the image (it stores both, a CDN serves them).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import { errors } from '../errors.ts'
import { jobSource } from '../plugins/sources.ts'
import { jobRoute } from './schemas.ts'
import { DEFAULT_QUALITY, MAX_STORYBOARD_TILES as MAX_TILES, maxSpriteSide } from '../../contract/limits.ts'
import type { StoryboardResult } from '../../contract/types.ts'

/** The route's options: a job's storyboard output derives from them (src/batch/spec.ts). */
export const StoryboardOptions = Type.Object({
  interval: Type.Optional(Type.Number({ minimum: 0.1, maximum: 3600, description: 'seconds between tiles (or give count)' })),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TILES, description: `tiles over the whole video, at most ${MAX_TILES} (default 60 when no interval)` })),
  columns: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: 'tiles per row (default 10)' })),
  width: Type.Optional(Type.Integer({ minimum: 16, maximum: 640, description: 'tile width in px (default 160); the height follows the video' })),
  format: Type.Optional(Type.Enum(['jpeg', 'webp'], { description: 'the sprite\'s format (default jpeg)' })),
  quality: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  sprite: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: '^[^\\s#]+$', description: 'a URL without spaces or #: where the client will serve the sprite, which the VTT cues point at (default sprite.jpg or sprite.webp)' }))
}, { additionalProperties: false })

const StoryboardReply = Type.Object({
  sprite: Type.String({ description: 'the sprite sheet, base64' }),
  mime: Type.String(),
  width: Type.Integer(),
  height: Type.Integer(),
  columns: Type.Integer(),
  rows: Type.Integer(),
  tileWidth: Type.Integer(),
  tileHeight: Type.Integer(),
  tiles: Type.Array(Type.Object({ start: Type.Number(), end: Type.Number(), x: Type.Integer(), y: Type.Integer() })),
  vtt: Type.String({ description: 'WebVTT: one cue per tile, its text `{sprite}#xywh=x,y,w,h`' })
})

const DOC = {
  summary: 'Sprite sheet of video frames plus the WebVTT for player scrub previews',
  description: 'Tiles at a fixed interval or a fixed count, one seek each (keyframe seeks when tiles are 2 s or more apart). The JSON reply carries the sprite (base64) and a WebVTT whose cues point at `sprite#xywh=x,y,w,h`.'
}

/** WebVTT times: hh:mm:ss.mmm */
const stamp = (seconds: number) => new Date(Math.round(seconds * 1000)).toISOString().slice(11, 23)

export function webVtt (board: Pick<StoryboardResult, 'tiles' | 'tileWidth' | 'tileHeight'>, sprite: string): string {
  const cues = board.tiles.map(({ start, end, x, y }) => `${stamp(start)} --> ${stamp(end)}\n${sprite}#xywh=${x},${y},${board.tileWidth},${board.tileHeight}`)
  return `WEBVTT\n\n${cues.join('\n\n')}\n`
}

/** The sprite's width follows from the options alone (its height needs the video): checked before the upload is read, or a job queued. */
export function checkSpriteWidth ({ columns = 10, width = 160, count, format = 'jpeg' }: Static<typeof StoryboardOptions>): void {
  const [wide, side] = [Math.min(columns, count ?? columns) * width, maxSpriteSide(format)]
  if (wide > side) throw new errors.BadOptions(`columns x width makes a sprite ${wide} px wide; at most ${side}`)
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/storyboard', jobRoute('storyboard', { ...DOC, options: StoryboardOptions, ok: StoryboardReply }), async (request, reply) => {
    checkSpriteWidth(request.query)
    const { source, options } = await app.sources.take(request, reply, StoryboardOptions, { remoteVideos: true })
    if (options.interval !== undefined && options.count !== undefined) throw new errors.BadOptions('give interval or count, not both')
    checkSpriteWidth(options)
    const job = jobSource(source)
    if (job.media.kind !== 'video') throw new errors.UnsupportedMedia('storyboards are made of videos')
    app.mediaTools.assertVideo()
    const format = options.format ?? 'jpeg'
    const { value } = await app.jobs.run({
      kind: 'storyboard',
      source: job,
      ...(options.interval === undefined ? { count: options.count ?? 60 } : { interval: options.interval }),
      columns: options.columns ?? 10,
      tileWidth: options.width ?? 160,
      format,
      quality: options.quality ?? DEFAULT_QUALITY
    }, request.jobOptions)
    const { sprite, ...board } = value
    return reply.send({
      ...board,
      sprite: Buffer.from(sprite.buffer, sprite.byteOffset, sprite.byteLength).toString('base64'),
      mime: `image/${format}`,
      vtt: webVtt(board, options.sprite ?? `sprite.${format === 'jpeg' ? 'jpg' : 'webp'}`)
    })
  })
}

export default routes
