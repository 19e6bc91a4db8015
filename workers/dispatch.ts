// Runs one job by name and turns any failure into plain { code, message } data.
// Both the piscina entry (index.ts) and inline mode call this, so the two modes run identical code.
import { performance } from 'node:perf_hooks'
import { begin } from '../contract/control.ts'
import { sourceSha256 } from '../contract/digest.ts'
import { toFailure } from '../contract/job-error.ts'
import { info } from './video/info.ts'
import { perceptual } from './hashes/perceptual.ts'
import { preview } from './video/preview.ts'
import { resize } from './image/resize.ts'
import { storyboard } from './video/storyboard.ts'
import { thumbnail } from './video/thumbnail.ts'
import { videoSet } from './video-set/video-set.ts'
import type { Envelope, ImageResult, JobContext, JobOutcome, JobResults, JobTask } from '../contract/types.ts'

type Job<K extends JobTask['kind']> = (task: Extract<JobTask, { kind: K }>, ctx: JobContext) => Promise<JobResults[K]>
const jobs: { [K in JobTask['kind']]: Job<K> } = { thumbnail, resize, perceptual, info, storyboard, preview, 'video-set': videoSet }

export async function dispatch ({ task, settings, control, deadline }: Envelope): Promise<JobOutcome> {
  const started = performance.now()
  const running = begin(control, deadline)
  if (running === undefined) return { ok: false, error: { code: 'CANCELLED', message: 'the job was cancelled' }, workMs: 0 }
  try {
    const digest = imageSourceDigest(task)
    const job = jobs[task.kind] as Job<typeof task.kind>
    const value = await job(task, { settings, signal: running.signal, deadline })
    return { ok: true, value: digest === undefined ? value : { ...value as ImageResult, sourceSha256: digest }, workMs: performance.now() - started }
  } catch (err) {
    // A job that lost the race with its cancel/deadline reports that, not the decoder's complaint about being killed.
    const reason = running.signal.aborted ? running.signal.reason : err
    return { ok: false, error: toFailure(reason), workMs: performance.now() - started }
  } finally {
    running.finish()
  }
}

/**
 * An image job's source that the spool left unhashed is hashed here, where its bytes are anyway: the main
 * thread then needs no digest before the job (src/routes/image-reply.ts derives the ETag from this one).
 * Those are the sources on a slab (src/sources/spool.ts puts exactly those there); the others were hashed
 * before the job. Before the job, so that it is the digest of the bytes as received.
 */
function imageSourceDigest (task: JobTask): string | undefined {
  if ((task.kind !== 'thumbnail' && task.kind !== 'resize') || task.source.ref.location !== 'memory') return undefined
  if (!(task.source.ref.bytes.buffer instanceof SharedArrayBuffer)) return undefined
  return sourceSha256(task.source.ref.bytes)
}
