// Query/JSON options shared by the image-producing routes: one schema (validation + OpenAPI) and
// one normalisation into the plain options the workers take.
import { Type, type Static, type TObject } from 'typebox'
import { errors } from '../errors.ts'
import { DIGEST_ALGORITHMS, type DigestAlgorithm } from '../sources/spool.ts'
import { DEFAULT_QUALITY, MAX_OUTPUT_SIDE } from '../../contract/limits.ts'
import type { Media } from '../../contract/sniff.ts'
import type { FramePosition, ImageOptions, OutputFormat, Position, VideoOptions } from '../../contract/types.ts'

/** The formats an image output can be written in (the routes add `auto`, negotiated from Accept). */
export const OUTPUT_FORMATS = ['jpeg', 'png', 'webp', 'avif', 'gif'] as const

export const ImageQuery = {
  width: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_OUTPUT_SIDE, description: 'output width in px' })),
  height: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_OUTPUT_SIDE, description: 'output height in px' })),
  fit: Type.Optional(Type.Enum(['cover', 'contain', 'fill', 'inside', 'outside'], { description: 'how the image fits width x height (default cover)' })),
  format: Type.Optional(Type.Enum([...OUTPUT_FORMATS, 'auto'], { description: 'output format; auto picks avif/webp/jpeg from Accept' })),
  quality: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'encoder quality (default 80; GIF has none)' })),
  animated: Type.Optional(Type.Boolean({ description: 'an animated GIF/WebP source stays animated when the output format can hold it (webp, gif); false: its still first frame (default true)' }))
}

export const VideoQuery = {
  at: Type.Optional(Type.String({ pattern: '^\\d{1,6}(\\.\\d{1,3})?%?$', description: 'seconds (12.5) or a percentage of the duration (10%): the video frame; default 1 s' })),
  frame: Type.Optional(Type.Enum(['exact', 'best'], { description: 'best: the most representative frame near `at`' })),
  seek: Type.Optional(Type.Enum(['exact', 'keyframe'], { description: 'keyframe: the nearest keyframe at or before `at`, without decoding up to it (fast on long-GOP video); default exact' }))
}

const GRAVITIES = ['centre', 'center', 'north', 'northeast', 'east', 'southeast', 'south', 'southwest', 'west', 'northwest'] as const

export const ResizeQuery = {
  ...ImageQuery,
  position: Type.Optional(Type.Enum([...GRAVITIES, 'attention', 'entropy'], { description: 'crop position for fit=cover/contain: a gravity, or the smart crops attention/entropy' })),
  background: Type.Optional(Type.String({ pattern: '^#?([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$', description: 'a colour, RRGGBB or RRGGBBAA (a leading # sent as %23): the bars of fit=contain, and what transparency becomes in JPEG' })),
  withoutEnlargement: Type.Optional(Type.Boolean({ description: 'never scale up (default true)' }))
}

export const HashQuery = {
  algorithms: Type.Optional(Type.String({ pattern: '^[a-z0-9-]+(,[a-z0-9-]+)*$', description: `a comma-separated list of ${DIGEST_ALGORITHMS.join(', ')}: the digests of the source bytes (default sha256)` })),
  ...VideoQuery
}

type ImageQueryValue = Static<ReturnType<typeof Type.Object<typeof ResizeQuery>>>
type VideoQueryValue = Static<ReturnType<typeof Type.Object<typeof VideoQuery>>>

export interface ImageDefaults {
  width?: number
  format: OutputFormat
}

/** Resize keeps the source's format where it can be written (a GIF stays a GIF, animated); others become JPEG. */
export function sameFormat (media: Media | undefined): OutputFormat {
  const format = media?.format
  return format === 'jpeg' || format === 'png' || format === 'webp' || format === 'avif' || format === 'gif' ? format : 'jpeg'
}

export function imageOptions (query: ImageQueryValue, accept: string | undefined, defaults: ImageDefaults): { options: ImageOptions, negotiated: boolean } {
  const negotiated = query.format === 'auto'
  const format = query.format === undefined ? defaults.format : query.format === 'auto' ? negotiate(accept) : query.format
  const sized = query.width !== undefined || query.height !== undefined
  return {
    negotiated,
    options: {
      width: sized ? query.width : defaults.width,
      height: query.height,
      fit: query.fit ?? 'cover',
      position: query.position === 'center' ? 'centre' : query.position as Position | undefined,
      background: query.background === undefined ? undefined : `#${query.background.replace(/^#/, '')}`,
      format,
      quality: query.quality ?? DEFAULT_QUALITY,
      withoutEnlargement: query.withoutEnlargement ?? true,
      ...(query.animated === false ? { animated: false } : {})
    }
  }
}

export function videoOptions (query: VideoQueryValue): VideoOptions {
  let at: FramePosition | undefined
  if (query.at !== undefined) {
    const value = Number.parseFloat(query.at)
    if (query.at.endsWith('%')) {
      if (value > 100) throw new errors.BadOptions('at must be a percentage from 0% to 100%')
      at = { percent: value }
    } else {
      at = { seconds: value }
    }
  }
  return { at, best: query.frame === 'best', ...(query.seek === undefined ? {} : { seek: query.seek }) }
}

export function digestAlgorithms (list: string | undefined): DigestAlgorithm[] {
  const wanted = (list ?? 'sha256').split(',')
  const unknown = wanted.filter(a => !(DIGEST_ALGORITHMS as readonly string[]).includes(a))
  if (unknown.length > 0) throw new errors.BadOptions(`unknown algorithms ${unknown.join(', ')}; use ${DIGEST_ALGORITHMS.join(', ')}`)
  return [...new Set(wanted)] as DigestAlgorithm[]
}

/** The best format the client says it takes: AVIF, then WebP, else JPEG (which every client reads). */
export function negotiate (accept: string | undefined): OutputFormat {
  const accepted = new Set<string>()
  for (const part of (accept ?? '').toLowerCase().split(',')) {
    const [type, ...params] = part.trim().split(';')
    const q = params.map(p => p.trim()).find(p => p.startsWith('q='))
    if (q === undefined || Number(q.slice(2)) > 0) accepted.add(type!.trim())
  }
  if (accepted.has('image/avif')) return 'avif'
  if (accepted.has('image/webp')) return 'webp'
  return 'jpeg'
}

/**
 * Body schema of a job route. Only JSON bodies are validated here (a URL plus the same options as the
 * query); raw media and multipart bodies stream past validation into the spool.
 */
export function sourceBody (options: TObject) {
  return {
    content: {
      'application/json': {
        schema: Type.Object({
          url: Type.String({ minLength: 1, maxLength: 4096, description: 'the http(s) URL of the source' }),
          ...options.properties
        }, { additionalProperties: false })
      }
    }
  }
}
