// Errors inside workers. They cross the thread boundary as plain { code, message } (see dispatch.ts);
// src/errors.ts maps each code to one entry of the HTTP catalogue.
export type FailureCode =
  | 'BAD_OPTIONS'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA'
  | 'MEDIA_UNREADABLE'
  | 'VIDEO_UNAVAILABLE'
  | 'TIMEOUT'
  | 'CANCELLED'
  | 'INTERNAL'

export interface JobFailure {
  code: FailureCode
  /** Safe to show to a client: never a path, a stderr line or a stack. */
  message: string
  /** For the server log only. */
  detail?: string
}

export class JobError extends Error {
  readonly code: FailureCode
  readonly detail: string | undefined

  constructor (code: FailureCode, message: string, detail?: string) {
    super(message)
    this.code = code
    this.detail = detail
  }
}

export function toFailure (err: unknown): JobFailure {
  if (err instanceof JobError) return { code: err.code, message: err.message, detail: err.detail }
  return { code: 'INTERNAL', message: 'internal error', detail: err instanceof Error ? (err.stack ?? err.message) : String(err) }
}
