// How a kept GET-URL result goes out (from the in-memory memo or the result store), and how a miss's reply
// is kept once it is sent. A kept result answers exactly as its miss did: the same ETag, Content-Type,
// Content-Disposition, Cache-Control and Vary, and 304 when If-None-Match matches.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { notModified } from '../routes/image-reply.ts'
import type { StoredReply } from './entry.ts'

/** Sends `kept` (or 304); `timing` names where it came from in Server-Timing (a miss names its queue and work). */
export function sendKept (request: FastifyRequest, reply: FastifyReply, kept: StoredReply, { negotiated, cacheControl, timing }: { negotiated: boolean, cacheControl: string, timing?: string }) {
  if (notModified(request, reply, kept.etag, negotiated, cacheControl)) return reply.send()
  if (negotiated) reply.header('vary', 'Accept')
  if (timing !== undefined) reply.header('server-timing', timing)
  return reply.headers(kept.headers).header('etag', kept.etag).header('cache-control', cacheControl).send(kept.body)
}

/** The app's result store's entry for `key` (undefined: no store, or a miss) and the Server-Timing a hit sends. */
export async function lookUp (app: FastifyInstance, key: string | undefined): Promise<{ kept: StoredReply, timing: string } | undefined> {
  const store = app.resultStore
  if (store === undefined || key === undefined) return undefined
  const started = performance.now()
  const kept = await store.get(key)
  return kept === undefined ? undefined : { kept, timing: `result;desc="${store.name}";dur=${(performance.now() - started).toFixed(1)}` }
}

/** Keeps a miss's reply in the app's result store once it has gone out (nothing without a store). */
export function keepAfterSent (app: FastifyInstance, reply: FastifyReply, key: string | undefined, kept: StoredReply): void {
  const store = app.resultStore
  if (store !== undefined && key !== undefined) reply.raw.once('finish', () => store.put(key, kept))
}
