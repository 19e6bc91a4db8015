// The one table of thumbd's error codes. Everything else derives from it: the HTTP errors of src/errors.ts
// (status, public message), the jobs' outcome label in /metrics, the error replies in OpenAPI, and which
// job failures are about the media (reported in /api/hash's reply rather than failing it).
// Codes are stable (clients match on them) and never reused; on the wire they carry the prefix THUMBD_.

/** How a failure is counted in thumbd_jobs_total{outcome}. */
export type OutcomeLabel = 'ok' | 'refused' | 'shed' | 'cancelled' | 'timeout' | 'crashed' | 'error'

export interface ErrorSpec {
  status: number
  /** Public message; `%s` (or `%d`) takes the detail given where the error is raised. */
  message: string
  /** The outcome label when a job fails with this code. */
  outcome: OutcomeLabel
  /** The media itself was refused (size, type, decodability): not the client's request, not the server. */
  media?: true
  /** Refusals of load: raised hundreds of times a second, so no stack is captured (about 50 us each). */
  noStack?: true
}

export const ERROR_TABLE = {
  BAD_OPTIONS: { status: 400, message: 'Bad options: %s', outcome: 'refused' },
  SOURCE_FORBIDDEN: { status: 400, message: 'Source not allowed: %s', outcome: 'refused' },
  UNAUTHORIZED: { status: 401, message: 'API key refused: %s', outcome: 'refused' },
  BAD_SIGNATURE: { status: 403, message: 'Bad URL signature: %s', outcome: 'refused' },
  NOT_FOUND: { status: 404, message: 'Route %s not found: every route is listed at /docs (OpenAPI at /openapi.json)', outcome: 'refused' },
  SOURCE_NOT_FOUND: { status: 404, message: 'Source not found: %s', outcome: 'refused' },
  URL_EXPIRED: { status: 404, message: 'URL expired: %s', outcome: 'refused' },
  JOB_NOT_FOUND: { status: 404, message: 'No job %s for this key', outcome: 'refused' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed: %s', outcome: 'refused' },
  REQUEST_TIMEOUT: { status: 408, message: 'Request too slow: %s', outcome: 'refused', noStack: true },
  JOB_CONFLICT: { status: 409, message: 'Idempotency-Key reused with a different request: %s', outcome: 'refused' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'Too large: %s', outcome: 'refused', media: true },
  UNSUPPORTED_MEDIA: { status: 415, message: 'Unsupported media: %s', outcome: 'refused', media: true },
  MEDIA_UNREADABLE: { status: 422, message: 'Media could not be decoded: %s', outcome: 'refused', media: true },
  NO_PICTURE: { status: 422, message: 'No picture to show: %s', outcome: 'refused', media: true },
  INTERNAL: { status: 500, message: 'Internal error', outcome: 'error' },
  SOURCE_FETCH_FAILED: { status: 502, message: 'Source could not be fetched: %s', outcome: 'refused' },
  OVERLOADED: { status: 503, message: 'Server overloaded, retry later', outcome: 'shed', noStack: true },
  DRAINING: { status: 503, message: 'Server is shutting down, retry on another instance', outcome: 'shed', noStack: true },
  VIDEO_UNAVAILABLE: { status: 503, message: 'Video is not available on this host: %s', outcome: 'refused' },
  TIMEOUT: { status: 504, message: 'The job ran past %d ms', outcome: 'timeout' }
} as const satisfies Record<string, ErrorSpec>

export type ErrorCode = keyof typeof ERROR_TABLE

export const ERROR_CODES = Object.keys(ERROR_TABLE) as ErrorCode[]
