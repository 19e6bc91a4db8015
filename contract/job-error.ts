// Errors inside workers. They cross the thread boundary as plain { code, message } (see workers/dispatch.ts);
// the code is one of contract/error-codes.ts, and src/errors.ts turns it into that HTTP error.
import type { ErrorCode } from './error-codes.ts'

/** A catalogue code, or CANCELLED: the job was stopped for a client that left or at the end of a shutdown. */
export type FailureCode = ErrorCode | 'CANCELLED'

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
