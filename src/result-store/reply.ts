// How a kept GET-URL result goes out (from the in-memory memo or the result store), and how a miss's reply
// is kept once it is sent. A kept result answers exactly as its miss did: the same ETag, Content-Type,
// Content-Disposition, Cache-Control and Vary, and 304 when If-None-Match matches.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { notModified } from '../routes/image-reply.ts'
import type { StoredReply } from './entry.ts'

/** Sends `kept` (or 304); `timing` names where it came from in Server-Timing (a miss names its queue and work). */
export function sendKept (request: FastifyRequest, reply: FastifyReply, kept: StoredReply, { negotiated, cacheControl, timing }: { negotiated: boolean, cacheControl: string, timing?: string }) {
  if (notModified(request, reply, kept.etag, negotiated, cacheControl)) return reply.send()
  if (negotiated) reply.header('vary', 'Accept')
  if (timing !== undefined) reply.header('server-timing', timing)
  return reply.headers(kept.headers).header('etag', kept.etag).header('cache-control', cacheControl).send(kept.body)
}

/** Runs `keep` once the reply has gone out, so that keeping it never delays it (nothing if the client left first). */
export function afterSent (reply: FastifyReply, keep: () => void): void {
  reply.raw.once('finish', keep)
}
