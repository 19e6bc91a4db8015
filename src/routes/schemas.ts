// Schemas shared by the job routes: the error reply, the image reply, and how a job route is described,
// so validation, serialisation and OpenAPI all come from one place.
import { Type, type TObject, type TSchema } from 'typebox'
import { ERROR_CODES, ERROR_TABLE, type ErrorCode } from '../../contract/error-codes.ts'
import type { JobKind } from '../plugins/admission.ts'
import { sourceBody } from './options.ts'

export const ErrorReply = Type.Object({
  statusCode: Type.Integer(),
  code: Type.String({ description: 'stable THUMBD_* code' }),
  error: Type.String({ description: 'HTTP reason phrase' }),
  message: Type.String()
}, { $id: 'ErrorReply', description: 'Every error reply' })

/** The error replies of a route, by status, from the one table: every code but those it cannot answer. */
export function errorResponses (except: readonly ErrorCode[] = ['NOT_FOUND', 'BAD_SIGNATURE']) {
  // 405 is the router's answer for a method no route takes, never a route's own.
  const byStatus = Object.groupBy(ERROR_CODES.filter(code => code !== 'METHOD_NOT_ALLOWED' && !except.includes(code)), code => ERROR_TABLE[code].status)
  return Object.fromEntries(Object.entries(byStatus).map(([status, codes]) => [status, {
    ...Type.Ref('ErrorReply'),
    description: codes!.map(code => `THUMBD_${code}`).join(' or ') + (status === '503' ? ' (with Retry-After)' : '')
  }]))
}

export const IMAGE_REPLY = {
  description: 'The image, with ETag, Cache-Control and Server-Timing',
  content: Object.fromEntries(['image/jpeg', 'image/png', 'image/webp', 'image/avif', 'image/gif'].map(type => [type, { schema: { type: 'string', format: 'binary' } }]))
}

export interface JobRouteDoc {
  summary: string
  description?: string
  options: TObject
  ok: TSchema | typeof IMAGE_REPLY
}

/** A job route's options: its kind (for admission) and its schema (validation, serialisation, OpenAPI). */
export function jobRoute (jobKind: JobKind, doc: JobRouteDoc) {
  return { config: { jobKind }, schema: jobRouteSchema(doc) }
}

export function jobRouteSchema ({ summary, description, options, ok }: JobRouteDoc) {
  return {
    summary,
    description,
    tags: ['jobs'],
    security: [{ bearer: [] }],
    querystring: options,
    body: sourceBody(options),
    response: { 200: ok, 304: { description: 'Not modified (If-None-Match matched the ETag)', type: 'null' }, ...errorResponses() }
  }
}
