// One output of a job, made by the very job functions the synchronous routes run (through the pool, app.jobs), with
// the same defaults: what a client gets from POST /api/jobs is what it would get from the routes, as files.
import { imageOptions, sameFormat, videoOptions } from '../routes/options.ts'
import { previewTask } from '../routes/preview.ts'
import { webVtt } from '../routes/storyboard.ts'
import { errors } from '../errors.ts'
import { jobSource } from '../plugins/sources.ts'
import type { DigestAlgorithm, SpooledSource } from '../sources/spool.ts'
import { DEFAULT_QUALITY } from '../../contract/limits.ts'
import type { ImageResult, JobSource, JobTask, JobResults, MediaInfo, OutputFormat, StoryboardResult } from '../../contract/types.ts'
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
export function forTask (source: SpooledSource): JobSource {
  const job = jobSource(source)
  if (job.ref.location !== 'memory' || job.ref.bytes.buffer instanceof SharedArrayBuffer) return job
  return { ...job, ref: { location: 'memory', bytes: new Uint8Array(job.ref.bytes) } }
}

export async function makeOutput (output: Output & { name: string }, source: SpooledSource, run: RunStep, hasVideo: () => void): Promise<OutputFile[]> {
  const task = outputTask(output, source, hasVideo)
  return outputFiles(output, source, task === undefined ? undefined : await run(task))
}

/** The task an output needs (none for hashes without perceptual), with the routes' defaults; refusals as theirs. */
export function outputTask (output: Output & { name: string }, source: SpooledSource, hasVideo: () => void): JobTask | undefined {
  const kind = source.media?.kind
  if (kind === undefined) throw new errors.UnsupportedMedia('not an image or video format thumbd reads')
  if (kind !== 'image') hasVideo()
  switch (output.kind) {
    case 'still': {
      const { options } = imageOptions(output, undefined, { width: 320, format: 'jpeg' })
      return { kind: 'thumbnail', source: forTask(source), image: options, video: videoOptions(output) }
    }
    case 'variant': {
      if (kind !== 'image') throw new errors.UnsupportedMedia('variants are made of images (use stills for videos)')
      const { options } = imageOptions(output, undefined, { format: sameFormat(source.media) })
      return { kind: 'resize', source: forTask(source), image: options }
    }
    case 'storyboard': {
      if (kind !== 'video') throw new errors.UnsupportedMedia('storyboards are made of videos')
      if (output.interval !== undefined && output.count !== undefined) throw new errors.BadOptions('give interval or count, not both')
      return {
        kind: 'storyboard',
        source: forTask(source),
        ...(output.interval === undefined ? { count: output.count ?? 60 } : { interval: output.interval }),
        columns: output.columns ?? 10,
        tileWidth: output.width ?? 160,
        format: output.format ?? 'jpeg',
        quality: output.quality ?? DEFAULT_QUALITY
      }
    }
    case 'preview': {
      if (kind !== 'video') throw new errors.UnsupportedMedia('previews are made of videos')
      return previewTask(forTask(source), output)
    }
    case 'hashes':
      // As POST /api/hash: the most representative frame near `at` unless frame=exact.
      return output.perceptual === false ? undefined : { kind: 'perceptual', source: forTask(source), video: { ...videoOptions(output), best: output.frame !== 'exact' } }
    case 'info':
      return { kind: 'info', source: forTask(source) }
  }
}

/** The files of an output, from its task's result. */
export function outputFiles (output: Output & { name: string }, source: SpooledSource, value: JobResults[JobTask['kind']] | undefined): OutputFile[] {
  const { name } = output
  switch (output.kind) {
    case 'still':
    case 'variant':
    case 'preview': {
      const { data, format } = value as ImageResult
      return [image(name, data, format)]
    }
    case 'storyboard': {
      const { sprite, ...board } = value as StoryboardResult
      const spriteFile = image(name, sprite, board.format)
      // The cues point at the sprite beside the VTT, by its file name: the pair can be served from anywhere.
      return [spriteFile, { file: `${name}.vtt`, bytes: Buffer.from(webVtt(board, spriteFile.file)), contentType: 'text/vtt' }]
    }
    case 'hashes': {
      const algorithms = output.algorithms ?? ['sha256']
      return [json(`${name}.json`, {
        size: source.size,
        type: { kind: source.media!.kind, format: source.media!.format, mime: source.media!.mime },
        digests: Object.fromEntries(algorithms.map(a => [a, source.digests[a]])),
        perceptual: value ?? null
      })]
    }
    case 'info':
      return [json(`${name}.json`, { ...value as MediaInfo, mime: source.media!.mime, size: source.size })]
  }
}

/** The digests a job's hashes outputs ask for, computed while its source streams in (never a second pass). */
export function wantedDigests (outputs: Output[]): DigestAlgorithm[] {
  return [...new Set(outputs.flatMap((o): DigestAlgorithm[] => o.kind === 'hashes' ? o.algorithms ?? ['sha256'] : []))]
}
