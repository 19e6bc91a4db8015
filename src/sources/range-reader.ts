// How ffmpeg reads a remote video without thumbd downloading it: a loopback HTTP server on the main thread
// that serves each source under a random token. ffmpeg (in its sandbox, where this server's port is the one
// TCP port it may connect to) asks http://127.0.0.1:PORT/TOKEN for byte ranges as it demuxes; each range is
// served from the blocks fetched so far, or fetched from the origin through the same guarded fetcher as
// every URL source (address policy per connection and per redirect) and checked: 206, exactly the range
// asked, the same size, the same validator (If-Range) and the same first bytes as at first. What one source
// may cost the origin is bounded (MAX_RANGE_BYTES, MAX_RANGE_REQUESTS, FETCH_TIMEOUT_MS per request); the
// first refusal ends the session, and through `failed` the job, with its catalogue error.
// Why a socket and not a pipe: MP4 may keep its index at the end, so ffmpeg must seek, and http is ffmpeg's
// one seekable streaming input. docs/architecture.md ("Remote videos") has the rest of the reasoning.
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Readable } from 'node:stream'
import { errors, ThumbdError } from '../errors.ts'
import { parseRangeRequest } from './byte-ranges.ts'
import { discard, expectRange, fetchError, type FetchedBody, type RangeHeaders } from './fetch-source.ts'
import type { SourceRef } from '../../contract/types.ts'

export interface RemoteFile {
  /** After the first request's redirects. */
  url: URL
  size: number
  /** A strong ETag or Last-Modified, sent as If-Range: an origin whose file changed answers 200, refused. */
  validator?: string
  /** The first bytes, as the first answer gave them: a later range over them must give the same. */
  head: Buffer
}

export interface RangeReaderOptions {
  fetch: (url: URL, signal: AbortSignal, headers: RangeHeaders) => Promise<FetchedBody>
  maxBytes: number
  maxRequests: number
  /** Each range request, from connect to last byte. */
  timeoutMs: number
  /** Told of each range request made to an origin, with its length (for /metrics). */
  onFetch?: (bytes: number) => void
}

export interface RemoteSession {
  ref: Extract<SourceRef, { location: 'remote' }>
  /** Aborted with the catalogue error of the first refusal: the origin's, or a budget's. */
  failed: AbortSignal
  /** What has been asked of the origin so far. */
  stats (): { bytes: number, requests: number }
  close (): void
}

export interface RangeReader {
  open (file: RemoteFile): RemoteSession
  close (): Promise<void>
}

const BLOCK_BYTES = 256 * 1024
/** Kept per source, least recently used first out: ffmpeg reads the index again each time it opens the file (every storyboard tile). */
const CACHE_BYTES = 16 * 2 ** 20
/** While ffmpeg keeps reading on, each fetch doubles, up to this many blocks (4 MiB): few requests for a long read, little waste on a seek. */
const MAX_RUN_BLOCKS = 16

class Session {
  /** Asked of the origin so far. */
  fetched = 0
  requests = 0
  /** Where the last answer ended, and the length of the run it was (in blocks). */
  private next = -1
  private run = 1
  readonly failure = new AbortController()
  /** Ends the origin requests under way: at a failure or at close. */
  private readonly stop = new AbortController()
  private readonly blocks = new Map<number, Buffer>()
  private cached = 0
  readonly responses = new Set<ServerResponse>()
  readonly file: RemoteFile
  private readonly options: RangeReaderOptions

  constructor (file: RemoteFile, options: RangeReaderOptions) {
    this.file = file
    this.options = options
  }

  fail (err: unknown) {
    const refusal = err instanceof ThumbdError ? err : fetchError(err, this.stop.signal)
    if (!this.stop.signal.aborted) this.failure.abort(refusal)
    this.close()
  }

  close () {
    this.stop.abort()
    for (const response of this.responses) response.destroy()
    this.blocks.clear()
  }

  /**
   * Answers a range with one run of blocks at most, whatever was asked (ffmpeg asks "bytes=N-"): ffmpeg's
   * http client asks again from where the answer ended (-reconnect), so nothing is fetched ahead of what it
   * reads, and no socket buffer hides how far that is. A run doubles while ffmpeg reads on from where the
   * last answer ended, up to MAX_RUN_BLOCKS; a seek starts again at one block.
   */
  async serve (request: IncomingMessage, response: ServerResponse) {
    const { size } = this.file
    const range = parseRangeRequest(request.headers.range, size)
    if (range === 'unsatisfiable') {
      response.writeHead(416, { 'content-range': `bytes */${size}` }).end()
      return
    }
    this.run = range.start === this.next ? Math.min(this.run * 2, MAX_RUN_BLOCKS) : 1
    const first = Math.floor(range.start / BLOCK_BYTES)
    const end = Math.min(range.end, (first + this.run) * BLOCK_BYTES - 1)
    this.next = end + 1
    const data = await this.bytes(range.start, end)
    response.writeHead(206, {
      'content-type': 'application/octet-stream',
      'accept-ranges': 'bytes',
      'content-range': `bytes ${range.start}-${end}/${size}`,
      'content-length': data.length
    })
    response.end(data)
  }

  /** Bytes start-end (inclusive), from the blocks kept and, for those missing, one request per gap. */
  private async bytes (start: number, end: number): Promise<Buffer> {
    const [first, last] = [Math.floor(start / BLOCK_BYTES), Math.floor(end / BLOCK_BYTES)]
    const pieces: Buffer[] = []
    for (let index = first; index <= last;) {
      const kept = this.cachedBlock(index)
      if (kept !== undefined) {
        pieces.push(kept)
        index++
        continue
      }
      let count = 1
      while (index + count <= last && !this.blocks.has(index + count)) count++
      pieces.push(await this.fetchBlocks(index, count))
      index += count
    }
    const offset = start - first * BLOCK_BYTES
    return Buffer.concat(pieces).subarray(offset, offset + end - start + 1)
  }

  private cachedBlock (index: number): Buffer | undefined {
    const block = this.blocks.get(index)
    if (block !== undefined) { // most recently used goes last
      this.blocks.delete(index)
      this.blocks.set(index, block)
    }
    return block
  }

  /** `count` blocks from `first`, in one request to the origin, checked, then kept. */
  private async fetchBlocks (first: number, count: number): Promise<Buffer> {
    const { url, size, validator, head } = this.file
    const start = first * BLOCK_BYTES
    const end = Math.min((first + count) * BLOCK_BYTES, size) - 1
    const length = end - start + 1
    if (this.requests >= this.options.maxRequests) throw new errors.PayloadTooLarge(`reading this video takes more than ${this.options.maxRequests} range requests (MAX_RANGE_REQUESTS)`)
    if (this.fetched + length > this.options.maxBytes) throw new errors.PayloadTooLarge(`reading this video takes more than ${this.options.maxBytes} bytes (MAX_RANGE_BYTES)`)
    this.requests++
    this.fetched += length
    this.options.onFetch?.(length)
    const signal = AbortSignal.any([this.stop.signal, AbortSignal.timeout(this.options.timeoutMs)])
    try {
      const answer = await this.options.fetch(url, signal, { range: `bytes=${start}-${end}`, ifRange: validator })
      expectRange(answer, { start, end, size })
      const data = await readExactly(answer.body, length)
      const seen = Math.min(head.length - start, length)
      if (seen > 0 && !data.subarray(0, seen).equals(head.subarray(start, start + seen))) {
        throw new errors.SourceFetchFailed('the source answered other bytes for a range it had already sent')
      }
      // Copies: a view would keep the whole run's buffer alive as long as any one of its blocks is kept.
      for (let i = 0; i < count; i++) this.keep(first + i, Buffer.from(data.subarray(i * BLOCK_BYTES, (i + 1) * BLOCK_BYTES)))
      return data
    } catch (err) {
      throw err instanceof ThumbdError ? err : fetchError(err, signal)
    }
  }

  private keep (index: number, block: Buffer) {
    // Two reads at once may fetch the same block: the newer replaces the older, counted once.
    this.cached += block.length - (this.blocks.get(index)?.length ?? 0)
    this.blocks.delete(index)
    this.blocks.set(index, block)
    for (const [oldest, dropped] of this.blocks) {
      if (this.cached <= CACHE_BYTES) break
      this.blocks.delete(oldest)
      this.cached -= dropped.length
    }
  }
}

/** The whole body, which must be exactly `length` bytes (undici also holds it to its Content-Length). */
async function readExactly (body: Readable, length: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let received = 0
  for await (const chunk of body) {
    received += (chunk as Buffer).length
    if (received > length) {
      discard(body)
      break
    }
    chunks.push(chunk as Buffer)
  }
  if (received !== length) throw new errors.SourceFetchFailed(`a range of ${length} bytes came with ${received > length ? 'more' : received}`)
  return Buffer.concat(chunks, length)
}

/** Listens on an ephemeral loopback port; every source it serves needs its token, unguessable (192 bits). */
export async function startRangeReader (options: RangeReaderOptions): Promise<RangeReader> {
  const sessions = new Map<string, Session>()
  const server = createServer({ keepAliveTimeout: 1000, headersTimeout: 10_000 }, (request, response) => {
    const session = request.method === 'GET' ? sessions.get((request.url ?? '').slice(1)) : undefined
    if (session === undefined || session.failure.signal.aborted) {
      response.writeHead(404).end()
      return
    }
    session.responses.add(response)
    response.on('close', () => session.responses.delete(response))
    session.serve(request, response).catch(err => session.fail(err))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo

  return {
    open (file) {
      const token = randomBytes(24).toString('base64url')
      const session = new Session(file, options)
      sessions.set(token, session)
      return {
        ref: { location: 'remote', url: `http://127.0.0.1:${port}/${token}`, port },
        failed: session.failure.signal,
        stats: () => ({ bytes: session.fetched, requests: session.requests }),
        close () {
          sessions.delete(token)
          session.close()
        }
      }
    },
    async close () {
      for (const session of sessions.values()) session.close()
      sessions.clear()
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
    }
  }
}
