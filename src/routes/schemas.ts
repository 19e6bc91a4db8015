// Schemas shared by the job routes: the error reply, the image reply, and how a job route is described,
// so validation, serialisation and OpenAPI all come from one place.
import { Type, type TObject, type TSchema } from 'typebox'
import { sourceBody } from './options.ts'

export const ErrorReply = Type.Object({
  statusCode: Type.Integer(),
  code: Type.String({ description: 'stable THUMBD_* code' }),
  error: Type.String({ description: 'HTTP reason phrase' }),
  message: Type.String()
}, { $id: 'ErrorReply', description: 'Every error reply' })

const ERRORS: Record<number, string> = {
  400: 'THUMBD_BAD_OPTIONS or THUMBD_SOURCE_FORBIDDEN',
  401: 'THUMBD_UNAUTHORIZED',
  413: 'THUMBD_PAYLOAD_TOO_LARGE',
  415: 'THUMBD_UNSUPPORTED_MEDIA',
  422: 'THUMBD_MEDIA_UNREADABLE',
  500: 'THUMBD_INTERNAL',
  502: 'THUMBD_SOURCE_FETCH_FAILED',
  503: 'THUMBD_OVERLOADED, THUMBD_DRAINING or THUMBD_VIDEO_UNAVAILABLE (with Retry-After)',
  504: 'THUMBD_TIMEOUT'
}

export const errorResponses = () => Object.fromEntries(Object.entries(ERRORS).map(([status, codes]) => [status, { ...Type.Ref('ErrorReply'), description: codes }]))

export const IMAGE_REPLY = {
  description: 'The image, with ETag, Cache-Control and Server-Timing',
  content: Object.fromEntries(['image/jpeg', 'image/png', 'image/webp', 'image/avif'].map(type => [type, { schema: { type: 'string', format: 'binary' } }]))
}

export interface JobRouteDoc {
  summary: string
  description?: string
  options: TObject
  ok: TSchema | typeof IMAGE_REPLY
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
