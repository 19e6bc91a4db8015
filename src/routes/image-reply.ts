// How image results go out: validators and caching headers derived from the source's content, so a
// repeated request is answered 304 before any job runs. A request without If-None-Match has no use for the
// digest before its job: its source's SHA-256 is then computed by the job, in the pool thread that has the
// bytes anyway (workers/dispatch.ts), and the ETag made from it after.
import { hash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { JobResult } from '../plugins/jobs.ts'
import type { PreviewTask, ResizeTask, ThumbnailTask } from '../../contract/types.ts'

/** The reply is a pure function of the source bytes and the options: it never changes. */
export const CACHE_CONTROL = 'public, max-age=31536000, immutable'

export function entityTag (sourceIdentity: string | undefined, kind: string, options: unknown): string {
  // A source hashed in its job has no identity before it (SpoolLimits.hashInJob): a tag of nothing is a bug.
  if (sourceIdentity === undefined) throw new Error('an ETag needs the source\'s identity; this source is hashed by its job')
  const digest = hash('sha256', `${sourceIdentity}\n${kind}\n${JSON.stringify(options)}`, 'base64url')
  return `"${digest.slice(0, 32)}"`
}

export function notModified (request: FastifyRequest, reply: FastifyReply, etag: string, vary: boolean, cacheControl = CACHE_CONTROL): boolean {
  const header = request.headers['if-none-match']
  if (header === undefined) return false
  const tags = header.split(',').map(t => t.trim().replace(/^W\//, ''))
  if (!tags.includes(etag) && !tags.includes('*')) return false
  reply.code(304).header('etag', etag).header('cache-control', cacheControl)
  if (vary) reply.header('vary', 'Accept')
  return true
}

/** Whether a request's source may be hashed by its job (no digest needed before it): it asks nothing conditional. */
export const hashInJob = (request: FastifyRequest): boolean => request.headers['if-none-match'] === undefined

/** The identity of a source hashed by its job: the SHA-256 that job returned. */
export function identityAfterJob (identity: string | undefined, result: JobResult): string {
  const known = identity ?? result.value.sourceSha256
  if (known === undefined) throw new Error('the job returned no digest of its source')
  return known
}

export interface ImageJob {
  /** The source's identity (SpooledSource.identity): with the options it makes the ETag; undefined if the job hashes it. */
  identity: string | undefined
  task: ThumbnailTask | ResizeTask | PreviewTask
  /** The options that change the output (normalised, so equal asks get equal tags). */
  etagOptions: unknown
  /** The format came from Accept: the reply varies by it. */
  negotiated: boolean
}

/**
 * The common end of an image route: 304 without a job when the ETag matches, else run the job and send. A
 * source its job hashes gets its ETag after the job (then a matching If-None-Match is still answered 304).
 */
export async function answerWithImage (app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, { identity, task, etagOptions, negotiated }: ImageJob) {
  if (identity !== undefined && notModified(request, reply, entityTag(identity, task.kind, etagOptions), negotiated)) return reply.send()
  const result = await app.jobs.run(task, request.jobOptions)
  const etag = entityTag(identityAfterJob(identity, result), task.kind, etagOptions)
  if (identity === undefined && notModified(request, reply, etag, negotiated)) return reply.send()
  return sendImage(reply, result, etag, negotiated)
}

export function sendImage (reply: FastifyReply, result: JobResult, etag: string, vary: boolean, cacheControl = CACHE_CONTROL) {
  const { data, format } = result.value
  reply
    .header('content-type', `image/${format}`)
    .header('etag', etag)
    .header('cache-control', cacheControl)
    .header('server-timing', `queue;dur=${result.queueMs.toFixed(1)}, work;dur=${result.workMs.toFixed(1)}`)
  if (vary) reply.header('vary', 'Accept')
  return reply.send(Buffer.from(data.buffer, data.byteOffset, data.byteLength))
}
