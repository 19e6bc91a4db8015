// Which failures a retry cannot mend: the job fails at once (a bad source, a refused output), rather than
// spending its attempts and their backoff on the same answer.
import { codeOf, ThumbdError } from '../errors.ts'
import { ERROR_TABLE } from '../../contract/error-codes.ts'

export interface JobError {
  code: string
  message: string
}

/** An origin's 4xx, as fetch-source.ts words it; 408 and 429 say "later", not "never". */
const UPSTREAM_4XX = /upstream answered 4(?!08|29)\d\d/

export function isPermanent (err: unknown): boolean {
  if (!(err instanceof ThumbdError)) return false
  const code = codeOf(err)
  if (code === 'SOURCE_FETCH_FAILED') return UPSTREAM_4XX.test(err.message)
  const status = (ERROR_TABLE as Record<string, { status: number }>)[code]?.status ?? 500
  return status >= 400 && status < 500 && code !== 'REQUEST_TIMEOUT'
}

/** What a job's state and webhook say of an error: the catalogue code and public message, never a stack or 5xx detail. */
export function jobError (err: unknown): JobError {
  // As the routes answer them: the public message of every code, none of an internal error's detail.
  if (err instanceof ThumbdError && codeOf(err) !== 'INTERNAL') return { code: err.code, message: err.message }
  return { code: 'THUMBD_INTERNAL', message: 'Internal error' }
}
