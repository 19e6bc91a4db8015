// What POST /api/jobs takes (one schema: validation and OpenAPI) and what a job keeps in the engine: its request,
// normalised, and a fingerprint of it, so that an Idempotency-Key reused with another request is told apart.
import { hash } from 'node:crypto'
import { Type, type Static } from 'typebox'
import { errors } from '../errors.ts'
import { DIGEST_ALGORITHMS } from '../sources/spool.ts'
import { MAX_OUTPUT_SIDE, MAX_PREVIEW_FRAMES, MAX_PREVIEW_SIDE, MAX_STORYBOARD_TILES } from '../../contract/limits.ts'

const Name = Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$', description: 'the output\'s file name without extension (default: its kind, numbered when repeated)' }))
const Side = (max: number, what: string) => Type.Optional(Type.Integer({ minimum: 1, maximum: max, description: `${what} in px` }))
const Quality = Type.Optional(Type.Integer({ minimum: 1, maximum: 100 }))
const At = Type.Optional(Type.String({ pattern: '^\\d{1,6}(\\.\\d{1,3})?%?$', description: 'seconds (12.5) or percent (10%)' }))

const Still = Type.Object({
  kind: Type.Literal('still'),
  name: Name,
  at: At,
  frame: Type.Optional(Type.Enum(['exact', 'best'], { description: 'best: the most representative frame near `at`' })),
  seek: Type.Optional(Type.Enum(['exact', 'keyframe'])),
  width: Side(MAX_OUTPUT_SIDE, 'width (default 320 when no height)'),
  height: Side(MAX_OUTPUT_SIDE, 'height'),
  fit: Type.Optional(Type.Enum(['cover', 'contain', 'fill', 'inside', 'outside'])),
  format: Type.Optional(Type.Enum(['jpeg', 'png', 'webp', 'avif'])),
  quality: Quality
}, { additionalProperties: false, description: 'a thumbnail of an image, or of a video frame (as POST /api/thumbnail)' })

const Variant = Type.Object({
  kind: Type.Literal('variant'),
  name: Name,
  width: Side(MAX_OUTPUT_SIDE, 'width'),
  height: Side(MAX_OUTPUT_SIDE, 'height'),
  fit: Type.Optional(Type.Enum(['cover', 'contain', 'fill', 'inside', 'outside'])),
  position: Type.Optional(Type.Enum(['centre', 'north', 'northeast', 'east', 'southeast', 'south', 'southwest', 'west', 'northwest', 'attention', 'entropy'])),
  format: Type.Optional(Type.Enum(['jpeg', 'png', 'webp', 'avif', 'gif'])),
  quality: Quality,
  withoutEnlargement: Type.Optional(Type.Boolean())
}, { additionalProperties: false, description: 'a resized image (as POST /api/resize); images only' })

const Storyboard = Type.Object({
  kind: Type.Literal('storyboard'),
  name: Name,
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_STORYBOARD_TILES })),
  interval: Type.Optional(Type.Number({ minimum: 0.1, maximum: 3600 })),
  columns: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
  width: Type.Optional(Type.Integer({ minimum: 16, maximum: 640 })),
  format: Type.Optional(Type.Enum(['jpeg', 'webp'])),
  quality: Quality
}, { additionalProperties: false, description: 'a sprite sheet and its WebVTT (as POST /api/storyboard); the cues point at the sprite\'s file name' })

const Preview = Type.Object({
  kind: Type.Literal('preview'),
  name: Name,
  frames: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PREVIEW_FRAMES })),
  width: Side(MAX_PREVIEW_SIDE, 'frame width'),
  height: Side(MAX_PREVIEW_SIDE, 'frame height'),
  fit: Type.Optional(Type.Enum(['inside', 'cover', 'contain'])),
  at: At,
  duration: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 604800 })),
  delay: Type.Optional(Type.Integer({ minimum: 20, maximum: 10000 })),
  format: Type.Optional(Type.Enum(['webp', 'gif'])),
  quality: Quality
}, { additionalProperties: false, description: 'a looping animated preview (as POST /api/preview)' })

const Hashes = Type.Object({
  kind: Type.Literal('hashes'),
  name: Name,
  algorithms: Type.Optional(Type.Array(Type.Enum([...DIGEST_ALGORITHMS]), { minItems: 1, uniqueItems: true, description: 'default sha256' })),
  perceptual: Type.Optional(Type.Boolean({ description: 'the perceptual hash and ThumbHash too (default true)' }))
}, { additionalProperties: false, description: 'a JSON of digests and perceptual hash (as POST /api/hash)' })

const Info = Type.Object({ kind: Type.Literal('info'), name: Name }, { additionalProperties: false, description: 'the info JSON (as POST /api/info)' })

export const OutputSpec = Type.Union([Still, Variant, Storyboard, Preview, Hashes, Info])
export type Output = Static<typeof OutputSpec>

export const MAX_OUTPUTS = 32

/** The request without its source: a JSON body, or the `job` field of a multipart upload. */
export const JobRequestFields = {
  destination: Type.String({ minLength: 1, maxLength: 2048, description: 'where the outputs go: a bucket prefix (s3://bucket/prefix, gs://, abs://, as sources take them, under the same settings), local:///dir, or file:///dir under JOBS_DESTINATION_ROOT; the job writes <destination>/<name>.<ext> and manifest.json last' }),
  outputs: Type.Array(OutputSpec, { minItems: 1, maxItems: MAX_OUTPUTS }),
  webhook: Type.Optional(Type.Object({
    url: Type.String({ minLength: 1, maxLength: 4096, description: 'POSTed the job\'s state when it ends, signed (Thumbd-Signature); the same address policy as URL sources' })
  }, { additionalProperties: false }))
}
export const JobRequestBody = Type.Object({
  source: Type.Object({ url: Type.String({ minLength: 1, maxLength: 4096, description: 'the http(s) URL of the source, or a store URL (s3://bucket/key, gs://, abs://, local:///path)' }) }, { additionalProperties: false }),
  ...JobRequestFields
}, { additionalProperties: false })
export type JobRequest = Static<typeof JobRequestBody>
export const JobRequestFieldsSchema = Type.Object(JobRequestFields, { additionalProperties: false })

/** A job's source: a URL fetched by the worker, or an upload kept in the destination until the job ends. */
export type JobSourceSpec = { url: string } | { upload: string, sha256: string }

/** What the engine keeps of a job (its `data`): plain JSON. */
export interface MediaJobData {
  /** A hash of the API key that made it: only that key sees it. */
  owner: string
  fingerprint: string
  source: JobSourceSpec
  destination: string
  outputs: Array<Output & { name: string }>
  webhook?: string
}

/** Every output gets a name: its own, else its kind (numbered from the second of a kind); two alike are refused. */
export function namedOutputs (outputs: Output[]): Array<Output & { name: string }> {
  const seen = new Set<string>()
  const perKind = new Map<string, number>()
  return outputs.map(output => {
    const n = (perKind.get(output.kind) ?? 0) + 1
    perKind.set(output.kind, n)
    const name = output.name ?? (n === 1 ? output.kind : `${output.kind}-${n}`)
    if (seen.has(name) || name === 'manifest') throw new errors.BadOptions(`output name ${name} is used twice (or is "manifest")`)
    seen.add(name)
    return { ...output, name }
  })
}

/** The same request gives the same fingerprint (key order aside); an upload is fingerprinted by its SHA-256. */
export function fingerprint (request: { source: { url: string } | { sha256: string }, destination: string, outputs: unknown, webhook?: string }): string {
  return hash('sha256', canonical(request), 'hex')
}

function canonical (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).filter(k => (value as Record<string, unknown>)[k] !== undefined).sort().map(k => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`
  }
  return JSON.stringify(value)
}
