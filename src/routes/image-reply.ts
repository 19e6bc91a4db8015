// How image results go out: validators and caching headers derived from the source's content, so a
// repeated request is answered 304 before any job runs.
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { JobResult } from '../plugins/jobs.ts'
import type { PreviewTask, ResizeTask, ThumbnailTask } from '../../contract/types.ts'

/** The reply is a pure function of the source bytes and the options: it never changes. */
export const CACHE_CONTROL = 'public, max-age=31536000, immutable'

export function entityTag (sourceIdentity: string, kind: string, options: unknown): string {
  const digest = createHash('sha256').update(`${sourceIdentity}\n${kind}\n${JSON.stringify(options)}`).digest('base64url')
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

export interface ImageJob {
  /** The source's identity (SpooledSource.identity): with the options it makes the ETag. */
  identity: string
  task: ThumbnailTask | ResizeTask | PreviewTask
  /** The options that change the output (normalised, so equal asks get equal tags). */
  etagOptions: unknown
  /** The format came from Accept: the reply varies by it. */
  negotiated: boolean
}

/** The common end of an image route: 304 without a job when the ETag matches, else run the job and send. */
export async function answerWithImage (app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, { identity, task, etagOptions, negotiated }: ImageJob) {
  const etag = entityTag(identity, task.kind, etagOptions)
  if (notModified(request, reply, etag, negotiated)) return reply.send()
  const result = await app.jobs.run(task, request.jobOptions)
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
