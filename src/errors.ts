// The one catalogue of thumbd's errors. Every reply that is not 2xx/304 carries one of these codes;
// codes are stable (clients match on them) and never reused.
import createError from '@fastify/error'

export const errors = {
  BadOptions: createError('THUMBD_BAD_OPTIONS', 'Bad options: %s', 400),
  SourceForbidden: createError('THUMBD_SOURCE_FORBIDDEN', 'Source not allowed: %s', 400),
  Unauthorized: createError('THUMBD_UNAUTHORIZED', 'Missing or invalid API key', 401),
  NotFound: createError('THUMBD_NOT_FOUND', 'Route %s not found', 404),
  PayloadTooLarge: createError('THUMBD_PAYLOAD_TOO_LARGE', 'Source too large: %s', 413),
  UnsupportedMedia: createError('THUMBD_UNSUPPORTED_MEDIA', 'Unsupported media: %s', 415),
  MediaUnreadable: createError('THUMBD_MEDIA_UNREADABLE', 'Media could not be decoded: %s', 422),
  Internal: createError('THUMBD_INTERNAL', 'Internal error', 500),
  SourceFetchFailed: createError('THUMBD_SOURCE_FETCH_FAILED', 'Source could not be fetched: %s', 502),
  // Load shedding refuses hundreds of requests a second: no stack trace to capture (about 50 us each).
  Overloaded: createError('THUMBD_OVERLOADED', 'Server overloaded, retry later', 503, Error, false),
  Draining: createError('THUMBD_DRAINING', 'Server is shutting down, retry on another instance', 503, Error, false),
  VideoUnavailable: createError('THUMBD_VIDEO_UNAVAILABLE', 'Video is not available on this host: %s', 503),
  Timeout: createError('THUMBD_TIMEOUT', 'The job ran past %d ms', 504)
} as const

export type ThumbdError = InstanceType<(typeof errors)[keyof typeof errors]>

/** Codes a job may fail with inside a worker (see workers/job-error.ts); each maps to one catalogue entry. */
export function fromJobFailure (failure: { code: string, message: string }, timeoutMs: number): ThumbdError {
  switch (failure.code) {
    case 'BAD_OPTIONS': return new errors.BadOptions(failure.message)
    case 'PAYLOAD_TOO_LARGE': return new errors.PayloadTooLarge(failure.message)
    case 'UNSUPPORTED_MEDIA': return new errors.UnsupportedMedia(failure.message)
    case 'MEDIA_UNREADABLE': return new errors.MediaUnreadable(failure.message)
    case 'VIDEO_UNAVAILABLE': return new errors.VideoUnavailable(failure.message)
    case 'TIMEOUT': return new errors.Timeout(timeoutMs)
    // Jobs are cancelled for a client that left (nobody reads this) or at the end of a shutdown's grace.
    case 'CANCELLED': return new errors.Draining()
    default: return new errors.Internal()
  }
}
