// The answer to a URL source's first request, "Range: bytes=0-", when it is not a plain 200: a large video
// stays remote (range-reader.ts); anything else is read whole from this same answer, and from more ranges
// for the rest where the server capped it (some answer an open range with their largest chunk).
import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import { errors } from '../errors.ts'
import { parseContentRange } from './byte-ranges.ts'
import { contentLength, discard, expectRange, type FetchedBody, type RangeHeaders } from './fetch-source.ts'
import type { RangeReader } from './range-reader.ts'
import { peek, type SpooledSource } from './spool.ts'
import { SNIFF_BYTES, sniff } from '../../contract/sniff.ts'

export interface FirstRangeContext {
  fetch: (url: URL, signal: AbortSignal, headers: RangeHeaders) => Promise<FetchedBody>
  /** Undefined: every source is read whole. */
  reader: RangeReader | undefined
  /** RANGE_READ_MIN_BYTES */
  remoteFromBytes: number
  maxSourceBytes: number
  /**
   * Spools a whole source (spool.ts, with the request's limits and digests); `framedBytes`: the stream is the
   * fetched body itself, that many bytes by its Content-Length (SpoolLimits.ownsChunks, declaredBytes).
   */
  spool: (stream: Readable, framedBytes?: number) => Promise<SpooledSource>
}

/** The validator later ranges are sent with (If-Range): a strong ETag, else Last-Modified. */
function validatorOf ({ headers }: FetchedBody): string | undefined {
  const etag = headers.etag
  return typeof etag === 'string' && !etag.startsWith('W/') ? etag : headers['last-modified']
}

export async function fromFirstRange (fetched: FetchedBody, signal: AbortSignal, context: FirstRangeContext): Promise<SpooledSource> {
  const answered = String(fetched.headers['content-range'])
  const range = parseContentRange(fetched.headers['content-range'])
  if (range?.start !== 0) {
    discard(fetched.body)
    throw new errors.SourceFetchFailed(`asked for bytes 0-, the source answered ${answered}`)
  }
  const validator = validatorOf(fetched)
  // Only a file large enough to stay remote needs sniffing first; any other is spooled from this answer.
  let body = fetched.body
  let framed = true
  if (context.reader !== undefined && range.size >= context.remoteFromBytes) {
    const { head, whole } = await peek(fetched.body, SNIFF_BYTES, signal)
    ;[body, framed] = [whole, false]
    const media = sniff(head)
    if (media?.kind === 'video') {
      whole.destroy()
      const session = context.reader.open({ url: fetched.url, size: range.size, validator, head })
      return {
        ref: session.ref,
        media,
        size: range.size,
        // The bytes are never all seen: the origin's word for them stands in (without a validator, URL and size only).
        identity: createHash('sha256').update(`${fetched.url.href}\n${range.size}\n${validator ?? ''}`).digest('hex'),
        digests: {},
        failed: session.failed,
        dispose: async () => session.close()
      }
    }
  }
  if (range.size > context.maxSourceBytes) {
    discard(body)
    throw new errors.PayloadTooLarge(`the source declares more than ${context.maxSourceBytes} bytes (MAX_SOURCE_BYTES)`)
  }
  // The whole file in this answer: its body as a 200's would be. Framed (undici ends it there) only by a
  // Content-Length that agrees with the range: a chunked 206, or one whose lengths disagree, is read as it comes.
  // An unframed body is held to the bytes its Content-Range announced: else a chunked "bytes 0-999/1000" that
  // goes on sending would be read up to MAX_SOURCE_BYTES.
  if (range.end === range.size - 1) {
    return framed && contentLength(fetched.headers) === range.size
      ? context.spool(body, range.size)
      : context.spool(Readable.from(capped(body, range.size, answered), { objectMode: false }))
  }
  async function * pieces () {
    yield * capped(body, range!.end + 1, answered)
    for (let at = range!.end + 1, asked = 0; at < range!.size; asked++) {
      if (asked === MAX_REST_REQUESTS) throw new errors.SourceFetchFailed(`the source answers in pieces too small (${answered})`)
      const rest = await context.fetch(fetched.url, signal, { range: `bytes=${at}-`, ifRange: validator })
      const next = expectRange(rest, { start: at, size: range!.size })
      let received = 0
      for await (const chunk of rest.body) {
        received += (chunk as Buffer).length
        yield chunk as Buffer
      }
      if (received !== next.end - at + 1) throw new errors.SourceFetchFailed(`bytes ${at}-${next.end} came as ${received} bytes`)
      at = next.end + 1
    }
  }
  return context.spool(Readable.from(pieces(), { objectMode: false }))
}

/** `body`, failed with 502 at the first byte past `bytes`, the length its Content-Range announced. */
async function * capped (body: Readable, bytes: number, answered: string): AsyncGenerator<Buffer> {
  let received = 0
  for await (const chunk of body) {
    received += (chunk as Buffer).length
    if (received > bytes) {
      discard(body)
      throw new errors.SourceFetchFailed(`the source sent more than it announced (${answered})`)
    }
    yield chunk as Buffer
  }
}

/** A server that caps open ranges is asked for the rest at most this many more times. */
const MAX_REST_REQUESTS = 32
