// A store's failures as catalogue errors, the same words for every store: a missing object is 404, a refusal
// (bad credentials, no permission) or an unreachable or slow store is 502 naming the store by scheme and bucket.
// None carries the SDK's error as its cause: SDK errors can hold request details (signed URLs, headers), so
// only the SDK's own error name and HTTP status go with it, for the log.
import { errors, ThumbdError } from '../errors.ts'
import { describeLocation } from './location.ts'
import type { ObjectLocation } from './store.ts'

/** What every SDK's error tells, reduced to what is safe to log. */
export interface StoreFailure {
  /** The HTTP status the store answered, if it answered. */
  status?: number
  /** The SDK's or the store's error name (NoSuchKey, AccessDenied, ECONNREFUSED ...). */
  name?: string
}

const withCause = <E extends Error>(err: E, failure: StoreFailure): E => Object.assign(err, { cause: { store: failure.name, status: failure.status } })

export const storeErrors = {
  notFound: (location: ObjectLocation) => new errors.SourceNotFound(`no such object in ${describeLocation(location)}`),
  /** The object is no longer the one whose first bytes were read (its ETag changed between two ranges). */
  changed: (location: ObjectLocation) => new errors.SourceFetchFailed(`the object in ${describeLocation(location)} changed while it was read`),
  /** Anything else: refused, unreachable, timed out, or a store error. */
  failed (location: ObjectLocation, failure: StoreFailure, signal?: AbortSignal): ThumbdError {
    const where = describeLocation(location)
    const { status } = failure
    const why = signal?.aborted === true
      ? 'timed out'
      : status === 401 || status === 403
        ? `refused access (${status}: check the credentials of thumbd's ${location.scheme} client and the bucket's policy)`
        : status === undefined ? 'could not be reached' : `answered ${status}`
    return withCause(new errors.SourceFetchFailed(`${where} ${why}`), failure)
  }
}

/** Already one of ours (a refusal by policy, a 404 mapped) passes through as it is. */
export function isOurs (err: unknown): err is ThumbdError {
  return err instanceof ThumbdError
}
