// A store's read as an HTTP origin would answer it (StoreAnswer): the headers the fetch path and the range
// reader look at, built one way for every store, so the stores differ only in how they get the bytes.
import type { IncomingHttpHeaders } from 'node:http'
import type { Readable } from 'node:stream'
import { parseRangeRequest, type ByteRange } from '../sources/byte-ranges.ts'
import type { StoreAnswer } from './store.ts'

export interface AnswerFacts {
  size: number
  etag?: string
  lastModified?: Date
  contentType?: string
}

/**
 * The bytes a Range header asks of an object of `size` bytes: a range, or undefined for the whole object (no
 * header, an empty object, or a range that cannot be served: as a server that ignores Range, the caller
 * answers 200 and the whole object, which the fetch path and the range reader check for themselves).
 */
export function askedRange (range: string | undefined, size: number): ByteRange | undefined {
  if (range === undefined || size === 0) return undefined
  const asked = parseRangeRequest(range, size)
  return asked === 'unsatisfiable' ? undefined : asked
}

/** 200 with the whole object, or 206 with `range` of it. */
export function storeAnswer (body: Readable, facts: AnswerFacts, range?: ByteRange): StoreAnswer {
  const headers: IncomingHttpHeaders = {
    'accept-ranges': 'bytes',
    'content-length': String(range === undefined ? facts.size : range.end - range.start + 1)
  }
  if (range !== undefined) headers['content-range'] = `bytes ${range.start}-${range.end}/${facts.size}`
  if (facts.etag !== undefined) headers.etag = facts.etag
  if (facts.lastModified !== undefined) headers['last-modified'] = facts.lastModified.toUTCString()
  if (facts.contentType !== undefined) headers['content-type'] = facts.contentType
  return { statusCode: range === undefined ? 200 : 206, headers, body }
}

/** A strong ETag in its quoted form, whatever quoting the SDK gave it in. */
export function quoteEtag (etag: string | undefined): string | undefined {
  if (etag === undefined || etag === '') return undefined
  return etag.startsWith('"') || etag.startsWith('W/') ? etag : `"${etag}"`
}
