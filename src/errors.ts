// thumbd's HTTP errors, one class per code of contract/error-codes.ts (status and public message come from
// there). They all extend ThumbdError, so "is this one of ours" is an instanceof, never a string test.
import createError from '@fastify/error'
import { ERROR_TABLE, type ErrorCode, type ErrorSpec } from '../contract/error-codes.ts'
import type { JobFailure } from '../contract/job-error.ts'

/** The base of every catalogue error. */
export class ThumbdError extends Error {
  declare code: `THUMBD_${ErrorCode}`
  declare statusCode: number
  /** Seconds, for 503s (error-handler.ts sends it as Retry-After). */
  retryAfter?: number
}

/** The arguments fill the message's %s / %d. */
type ThumbdErrorClass = new (...args: Array<string | number>) => ThumbdError

function define (code: ErrorCode): ThumbdErrorClass {
  const spec: ErrorSpec = ERROR_TABLE[code]
  return createError(`THUMBD_${code}`, spec.message, spec.status, ThumbdError as unknown as ErrorConstructor, spec.noStack !== true) as unknown as ThumbdErrorClass
}

export const errors = {
  BadOptions: define('BAD_OPTIONS'),
  SourceForbidden: define('SOURCE_FORBIDDEN'),
  Unauthorized: define('UNAUTHORIZED'),
  BadSignature: define('BAD_SIGNATURE'),
  NotFound: define('NOT_FOUND'),
  SourceNotFound: define('SOURCE_NOT_FOUND'),
  MethodNotAllowed: define('METHOD_NOT_ALLOWED'),
  UrlExpired: define('URL_EXPIRED'),
  JobNotFound: define('JOB_NOT_FOUND'),
  JobConflict: define('JOB_CONFLICT'),
  RequestTimeout: define('REQUEST_TIMEOUT'),
  PayloadTooLarge: define('PAYLOAD_TOO_LARGE'),
  UnsupportedMedia: define('UNSUPPORTED_MEDIA'),
  MediaUnreadable: define('MEDIA_UNREADABLE'),
  NoPicture: define('NO_PICTURE'),
  Internal: define('INTERNAL'),
  SourceFetchFailed: define('SOURCE_FETCH_FAILED'),
  Overloaded: define('OVERLOADED'),
  Draining: define('DRAINING'),
  VideoUnavailable: define('VIDEO_UNAVAILABLE'),
  Timeout: define('TIMEOUT')
} as const

const BY_CODE = Object.fromEntries(Object.values(errors).map(E => [new E().code.slice('THUMBD_'.length), E])) as Record<ErrorCode, ThumbdErrorClass>

/** The table's code of an error of ours. */
export const codeOf = (err: ThumbdError): ErrorCode => err.code.slice('THUMBD_'.length) as ErrorCode

/** A job's failure as the HTTP error of its code. */
export function fromJobFailure (failure: JobFailure, timeoutMs: number): ThumbdError {
  // Jobs are cancelled for a client that left (nobody reads this) or at the end of a shutdown's grace.
  if (failure.code === 'CANCELLED') return new errors.Draining()
  if (failure.code === 'TIMEOUT') return new errors.Timeout(timeoutMs)
  if (failure.code === 'INTERNAL') return new errors.Internal()
  return new BY_CODE[failure.code](failure.message)
}
