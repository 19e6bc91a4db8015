// The one small interface every store answers (S3-compatible, GCS, Azure Blob, a local directory). A read is
// shaped like an HTTP origin's answer (status, headers, body; 206 for a range), as imgproxy's storage readers
// are, so a store source takes the same path as a URL source: sniffing, limits, range reads, spool. Writes serve
// the result store and the outputs of asynchronous jobs.
import type { IncomingHttpHeaders } from 'node:http'
import type { Readable } from 'node:stream'

export type StoreScheme = 's3' | 'gs' | 'abs' | 'local'

/** Where an object is: `s3://bucket/key?versionId=`, `gs://bucket/key`, `abs://container/key`, `local:///path`. */
export interface ObjectLocation {
  scheme: StoreScheme
  /** The bucket or container; '' for `local`. */
  bucket: string
  /** The object's key, decoded; for `local`, the path below LOCAL_FILESYSTEM_ROOT. */
  key: string
  versionId?: string
}

export interface ReadOptions {
  /** An HTTP Range header value: `bytes=N-M` or `bytes=N-`. */
  range?: string
  /** The validator (ETag) the object must still have for the range to be read (as HTTP If-Range). */
  ifRange?: string
  signal?: AbortSignal
}

/**
 * What a read answers, as an HTTP origin would: 200 and the whole object, or 206 and the range, with
 * `content-length`, `content-range` (206), `etag`, `last-modified` and `content-type` headers where the store
 * has them. A missing object rejects with SOURCE_NOT_FOUND; a refusal, a timeout or an unreachable store with
 * SOURCE_FETCH_FAILED naming the store (never a credential).
 */
export interface StoreAnswer {
  statusCode: 200 | 206
  headers: IncomingHttpHeaders
  body: Readable
}

export interface WriteOptions {
  contentType: string
  cacheControl?: string
  /** Small string metadata kept with the object (the result store's headers, a job's id). */
  metadata?: Record<string, string>
  signal?: AbortSignal
}

export interface Written {
  size: number
  etag?: string
}

export interface ObjectStat {
  size: number
  etag?: string
  lastModified?: Date
  metadata?: Record<string, string>
}

export interface ObjectStore {
  readonly scheme: StoreScheme
  read (location: ObjectLocation, options?: ReadOptions): Promise<StoreAnswer>
  /** The object's size, validator and metadata without its bytes; undefined when it does not exist. */
  stat (location: ObjectLocation, signal?: AbortSignal): Promise<ObjectStat | undefined>
  /** Whole or not at all: a multipart upload completed, or a temp file renamed into place. */
  write (location: ObjectLocation, body: Buffer | Readable, options: WriteOptions): Promise<Written>
  remove (location: ObjectLocation): Promise<void>
  close (): Promise<void>
}
