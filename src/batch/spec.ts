// What POST /api/jobs takes (one schema: validation and OpenAPI) and what a job keeps in the engine: its request,
// normalised, and a fingerprint of it, so that an Idempotency-Key reused with another request is told apart.
import { hash } from 'node:crypto'
import { Type, type Static } from 'typebox'
import { errors } from '../errors.ts'
import { DIGEST_ALGORITHMS } from '../sources/spool.ts'
import { HashQuery, OUTPUT_FORMATS, videoOptions } from '../routes/options.ts'
import { PreviewOptions } from '../routes/preview.ts'
import { ResizeOptions } from '../routes/resize.ts'
import { checkSpriteWidth, StoryboardOptions } from '../routes/storyboard.ts'
import { ThumbnailOptions } from '../routes/thumbnail.ts'

const Name = Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$', description: 'the output\'s file name without extension (default: its kind, numbered when repeated)' }))
/** A file has no Accept header to negotiate from: the routes' formats without `auto`. */
const FileFormat = { format: Type.Optional(Type.Enum(OUTPUT_FORMATS, { description: 'output format' })) }

// Each output takes its route's own options (src/routes/*.ts), so a limit or an enum changed there is changed here.
const Still = Type.Object({
  kind: Type.Literal('still'),
  name: Name,
  ...Type.Omit(ThumbnailOptions, ['format']).properties,
  ...FileFormat
}, { additionalProperties: false, description: 'a thumbnail of an image, or of a video frame (as POST /api/thumbnail)' })

const Variant = Type.Object({
  kind: Type.Literal('variant'),
  name: Name,
  ...Type.Omit(ResizeOptions, ['format']).properties,
  format: Type.Optional(Type.Enum(OUTPUT_FORMATS, { description: 'output format (default: the source\'s where it can be written, else jpeg)' }))
}, { additionalProperties: false, description: 'a resized image (as POST /api/resize); images only' })

const Storyboard = Type.Object({
  kind: Type.Literal('storyboard'),
  name: Name,
  // The cues point at the sprite beside the VTT by its file name: no `sprite` URL to give.
  ...Type.Omit(StoryboardOptions, ['sprite']).properties
}, { additionalProperties: false, description: 'a sprite sheet and its WebVTT (as POST /api/storyboard); the cues point at the sprite\'s file name' })

const Preview = Type.Object({
  kind: Type.Literal('preview'),
  name: Name,
  ...PreviewOptions.properties
}, { additionalProperties: false, description: 'a looping animated preview (as POST /api/preview)' })

const Hashes = Type.Object({
  kind: Type.Literal('hashes'),
  name: Name,
  // The route's comma-separated list is an array here; its frame options (at, frame, seek) as they are.
  ...Type.Omit(Type.Object(HashQuery), ['algorithms']).properties,
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

/**
 * What the routes refuse beyond their schemas, before anything is read (a percentage over 100, a storyboard's
 * interval and count together, a sprite too wide), refused at submission with the same code.
 */
export function checkOutput (output: Output): void {
  if (output.kind === 'still' || output.kind === 'preview' || output.kind === 'hashes') videoOptions(output)
  if (output.kind === 'storyboard') {
    if (output.interval !== undefined && output.count !== undefined) throw new errors.BadOptions('give interval or count, not both')
    checkSpriteWidth(output)
  }
}

/** Every output gets a name: its own, else its kind (numbered from the second of a kind); two alike are refused. */
export function namedOutputs (outputs: Output[]): Array<Output & { name: string }> {
  outputs.forEach(checkOutput)
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
