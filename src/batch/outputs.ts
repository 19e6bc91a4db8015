// One output of a job, made by the very job functions the synchronous routes run (through the pool, app.jobs), with
// the same defaults: what a client gets from POST /api/jobs is what it would get from the routes, as files.
import { imageOptions, sameFormat, videoOptions } from '../routes/options.ts'
import { previewTask } from '../routes/preview.ts'
import { webVtt } from '../routes/storyboard.ts'
import { errors } from '../errors.ts'
import { jobSource } from '../plugins/sources.ts'
import type { DigestAlgorithm, SpooledSource } from '../sources/spool.ts'
import { DEFAULT_QUALITY } from '../../contract/limits.ts'
import type { JobSource, JobTask, JobResults, OutputFormat } from '../../contract/types.ts'
import type { Output } from './spec.ts'

export interface OutputFile {
  /** The file name under the destination. */
  file: string
  bytes: Buffer
  contentType: string
}

export type RunStep = <T extends JobTask>(task: T) => Promise<JobResults[T['kind']]>

const EXTENSION: Record<OutputFormat, string> = { jpeg: 'jpg', png: 'png', webp: 'webp', avif: 'avif', gif: 'gif' }
const asBuffer = (data: Uint8Array) => Buffer.from(data.buffer, data.byteOffset, data.byteLength)
const json = (file: string, value: unknown): OutputFile => ({ file, bytes: Buffer.from(JSON.stringify(value, null, 2) + '\n'), contentType: 'application/json' })
const image = (name: string, data: Uint8Array, format: OutputFormat): OutputFile => ({ file: `${name}.${EXTENSION[format]}`, bytes: asBuffer(data), contentType: `image/${format}` })

/**
 * The source as one task takes it. A task may move a source in memory to its thread (src/jobs/hand-off.ts), and
 * a job's next output needs it still: each task gets its own copy (images only: videos are files).
 */
function forTask (source: SpooledSource): JobSource {
  const job = jobSource(source)
  if (job.ref.location !== 'memory' || job.ref.bytes.buffer instanceof SharedArrayBuffer) return job
  return { ...job, ref: { location: 'memory', bytes: new Uint8Array(job.ref.bytes) } }
}

export async function makeOutput (output: Output & { name: string }, source: SpooledSource, run: RunStep, hasVideo: () => void): Promise<OutputFile[]> {
  const { name } = output
  const kind = source.media?.kind
  if (kind === undefined) throw new errors.UnsupportedMedia('not an image or video format thumbd reads')
  if (kind !== 'image') hasVideo()
  switch (output.kind) {
    case 'still': {
      const { options } = imageOptions(output, undefined, { width: 320, format: 'jpeg' })
      const value = await run({ kind: 'thumbnail', source: forTask(source), image: options, video: videoOptions(output) })
      return [image(name, value.data, value.format)]
    }
    case 'variant': {
      if (kind !== 'image') throw new errors.UnsupportedMedia('variants are made of images (use stills for videos)')
      const { options } = imageOptions(output, undefined, { format: sameFormat(source.media) })
      const value = await run({ kind: 'resize', source: forTask(source), image: options })
      return [image(name, value.data, value.format)]
    }
    case 'storyboard': {
      if (kind !== 'video') throw new errors.UnsupportedMedia('storyboards are made of videos')
      if (output.interval !== undefined && output.count !== undefined) throw new errors.BadOptions('give interval or count, not both')
      const format = output.format ?? 'jpeg'
      const { sprite, ...board } = await run({
        kind: 'storyboard',
        source: forTask(source),
        ...(output.interval === undefined ? { count: output.count ?? 60 } : { interval: output.interval }),
        columns: output.columns ?? 10,
        tileWidth: output.width ?? 160,
        format,
        quality: output.quality ?? DEFAULT_QUALITY
      })
      const spriteFile = image(name, sprite, format)
      // The cues point at the sprite beside the VTT, by its file name: the pair can be served from anywhere.
      return [spriteFile, { file: `${name}.vtt`, bytes: Buffer.from(webVtt(board, spriteFile.file)), contentType: 'text/vtt' }]
    }
    case 'preview': {
      if (kind !== 'video') throw new errors.UnsupportedMedia('previews are made of videos')
      const value = await run(previewTask(forTask(source), output))
      return [image(name, value.data, value.format)]
    }
    case 'hashes': {
      const algorithms = output.algorithms ?? ['sha256']
      // As POST /api/hash: the most representative frame near `at` unless frame=exact.
      const video = { ...videoOptions(output), best: output.frame !== 'exact' }
      const perceptual = output.perceptual === false ? null : await run({ kind: 'perceptual', source: forTask(source), video })
      return [json(`${name}.json`, {
        size: source.size,
        type: { kind, format: source.media!.format, mime: source.media!.mime },
        digests: Object.fromEntries(algorithms.map(a => [a, source.digests[a]])),
        perceptual
      })]
    }
    case 'info': {
      const value = await run({ kind: 'info', source: forTask(source) })
      return [json(`${name}.json`, { ...value, mime: source.media!.mime, size: source.size })]
    }
  }
}

/** The digests a job's hashes outputs ask for, computed while its source streams in (never a second pass). */
export function wantedDigests (outputs: Output[]): DigestAlgorithm[] {
  return [...new Set(outputs.flatMap((o): DigestAlgorithm[] => o.kind === 'hashes' ? o.algorithms ?? ['sha256'] : []))]
}
