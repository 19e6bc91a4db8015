// Takes a source stream into memory or a temp file while counting, hashing and sniffing it.
// Refusals are as early as the bytes allow: unknown type after the first few KB, size as soon as it is passed.
import { finished, Readable } from 'node:stream'
import { errors } from '../errors.ts'
import { SNIFF_BYTES, sniff, type Media } from '../../contract/sniff.ts'
import type { JobSource } from '../../contract/types.ts'
import { OFFLOAD_BYTES, StreamDigests, type RunDigestTask } from './digests.ts'
import { discard } from './fetch-source.ts'
import { Sink } from './sink.ts'
import type { TempDir } from './temp-dir.ts'

/** Digests /api/hash offers; each is computed while the source streams in, never in a second pass. */
export const DIGEST_ALGORITHMS = ['sha256', 'sha512', 'sha1', 'md5', 'blake2b512', 'sha3-256'] as const
export type DigestAlgorithm = (typeof DIGEST_ALGORITHMS)[number]

export interface SpoolLimits {
  maxBytes: number
  /** Images up to this size stay in memory; videos always go to a file (MP4 may keep its index at the end). */
  memoryBytes: number
  tempDir: TempDir
  /** Digests wanted besides SHA-256 (which is always computed: ETags derive from it). */
  algorithms?: readonly DigestAlgorithm[]
  /** Take any bytes (for digests), not only media thumbd reads. */
  anyBytes?: boolean
  /** Hashes large sources off the main thread; without it every byte is hashed here. */
  runDigestTask?: RunDigestTask
  /** The size the client announced (Content-Length of a raw body), if any: only a hint. */
  declaredBytes?: number
  /** Stops the intake with its reason (the body fell below the rate floor, see plugins/slow-clients.ts). */
  signal?: AbortSignal
  /**
   * A source that ends in memory is not hashed here nor on the digest thread: its image job computes the SHA-256
   * where the bytes are anyway (ImageResult.sourceSha256), and its identity is undefined until then. Only for
   * work that needs no digest before its job (no other algorithm asked, no If-None-Match to answer first).
   */
  hashInJob?: boolean
  /**
   * The stream's chunks are views nothing else reads (a fetched body: undici slices its socket reads): once they
   * are on a slab, the memory under them is given back at once rather than at a GC (sink.ts). With
   * declaredBytes, the body is framed by it (its Content-Length): a photo bound for a slab goes onto it as it
   * comes, and a byte more is refused.
   */
  ownsChunks?: boolean
}

export interface SpooledSource {
  /**
   * 'discarded': bytes that are no media were only counted and hashed (anyBytes), never kept. 'remote': a
   * video left where it is, read by ranges (range-reader.ts).
   */
  ref: JobSource['ref'] | { location: 'discarded' }
  /** What the bytes are; undefined only with anyBytes, for bytes that are no media thumbd reads. */
  media: Media | undefined
  size: number
  /**
   * What ETags derive from: the hex SHA-256 of the bytes received, or for a remote video its URL, size and
   * validator. Undefined for a source in memory spooled with hashInJob: its job returns the SHA-256.
   */
  identity: string | undefined
  /** Hex digests, by algorithm: sha256 and those asked for (none for a remote video, nor a source hashed in its job). */
  digests: Partial<Record<DigestAlgorithm, string>>
  /** A remote video's range reads failed (the reason is the catalogue error): whatever job reads it must stop. */
  failed?: AbortSignal
  /** Removes the temp file, if any (a remote video: ends its range reads). Safe to call more than once. */
  dispose (): Promise<void>
}

export async function spool (stream: Readable, limits: SpoolLimits): Promise<SpooledSource> {
  const algorithms = [...new Set<DigestAlgorithm>(['sha256', ...(limits.algorithms ?? [])])]
  // Sources that stay in memory are hashed whole at the end, off the main thread (sources/digests.ts).
  const digester = new StreamDigests(algorithms, limits.runDigestTask, limits.declaredBytes, OFFLOAD_BYTES, limits.memoryBytes)
  const sink = new Sink(limits)
  let sniffed = false
  let media: Media | undefined
  // The bytes' one digest is its job's to make, if they end in memory (hashInJob, SHA-256 alone).
  const jobHashes = limits.hashInJob === true && algorithms.length === 1
  // A fetched photo its job will hash, of an announced size: onto its slab as it comes (Sink.fillSlab), and
  // hashed by nothing here.
  const slabBytes = limits.ownsChunks === true && jobHashes &&
    limits.declaredBytes !== undefined && limits.declaredBytes <= Math.min(OFFLOAD_BYTES, limits.memoryBytes, limits.maxBytes)
    ? limits.declaredBytes
    : undefined
  try {
    // A refusal leaves the stream as it is (not destroyed): destroying a request body destroys its socket, and
    // the client would see a reset instead of its answer (plugins/slow-clients.ts reads the rest, bounded).
    const chunks = stream.iterator({ destroyOnReturn: false })[Symbol.asyncIterator]()
    for (;;) {
      const next = await nextOrAbort(chunks, limits.signal)
      if (next.done === true) break
      const chunk = next.value as Buffer
      if (sink.size + chunk.length > limits.maxBytes) throw new errors.PayloadTooLarge(`the source is more than ${limits.maxBytes} bytes (MAX_SOURCE_BYTES)`)
      await digester.update(chunk)
      await sink.add(chunk)
      if (!sniffed && sink.size >= SNIFF_BYTES) {
        [sniffed, media] = [true, await sniffOrRefuse(sink, limits)]
        // Bytes that are no media are wanted for their digests only: keeping them would be wasted I/O.
        if (media === undefined) await sink.discard()
        else if (slabBytes !== undefined && sink.fillSlab(slabBytes)) {
          digester.abort()
          await chunks.return?.()
          await restOntoSlab(stream, sink, slabBytes, limits.signal)
          break
        }
      }
      // Bytes the sink no longer keeps whole are hashed as they come, not held for a hash at the end.
      if (!sink.inMemory) await digester.stopDeferring()
    }
    if (!sniffed) media = await sniffOrRefuse(sink, limits)
    // Its job hashes it, and nothing but its job reads it: on a slab (slabs.ts). (Past OFFLOAD_BYTES the digest
    // thread hashes it, as any large source.)
    const hashedByJob = jobHashes && sink.size <= OFFLOAD_BYTES
    let ref = await sink.finish(hashedByJob)
    let digests: SpooledSource['digests']
    if (ref.location === 'memory' && hashedByJob) {
      // The chunks held for a hash at the end are dropped unread.
      digester.abort()
      digests = {}
    } else if (ref.location === 'memory') {
      // The bytes move to the digest thread and back: the ref takes the ones that came back.
      const whole = await digester.finishWhole(ref.bytes)
      ;[ref, digests] = [{ location: 'memory', bytes: whole.bytes }, whole.digests]
    } else {
      digests = await digester.finish()
    }
    return { ref, media, size: sink.size, identity: digests.sha256, digests, dispose: () => sink.dispose() }
  } catch (err) {
    digester.abort()
    await sink.dispose()
    throw err
  }
}

/**
 * The rest of a fetched body onto its slab (Sink.fillSlab), each chunk as it comes, by 'data' events: none of
 * the promises, ticks and reads per chunk of the async iterator (half the main thread's garbage per photo:
 * measured 184 -> 92 KB of JS heap, V8's sampling heap profiler on `node load/main-thread.ts PHOTO --stand-in
 * --route url`). More than `capacity` bytes in all is refused. A body refused or cut is dropped: it is
 * the fetch's own.
 */
function restOntoSlab (body: Readable, sink: Sink, capacity: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false
    const stop = (err?: unknown) => {
      if (done) return
      done = true
      body.off('data', onData)
      signal?.removeEventListener('abort', onAbort)
      cleanup()
      if (err === undefined) return resolve()
      discard(body)
      reject(err)
    }
    const onData = (chunk: Buffer) => {
      if (sink.size + chunk.length > capacity) return stop(new errors.SourceFetchFailed(`the source sent more than the ${capacity} bytes it announced`))
      sink.fill(chunk)
    }
    const onAbort = () => stop(signal!.reason)
    const cleanup = finished(body, { writable: false }, err => stop(err ?? undefined))
    if (signal?.aborted === true) return stop(signal.reason)
    signal?.addEventListener('abort', onAbort, { once: true })
    body.on('data', onData)
    body.resume()
  })
}

/** The stream's next chunk, or the signal's reason thrown as soon as it aborts. */
export async function nextOrAbort<T> (iterator: AsyncIterator<T>, signal: AbortSignal | undefined): Promise<IteratorResult<T>> {
  if (signal === undefined) return iterator.next()
  signal.throwIfAborted()
  let onAbort: (() => void) | undefined
  const aborted = new Promise<never>((_resolve, reject) => { onAbort = () => reject(signal.reason); signal.addEventListener('abort', onAbort, { once: true }) })
  try {
    return await Promise.race([iterator.next(), aborted])
  } finally {
    signal.removeEventListener('abort', onAbort!)
  }
}

/** At least the stream's first `bytes` (all of it, if shorter), and a stream of everything, those bytes included. */
export async function peek (stream: Readable, bytes: number, signal?: AbortSignal): Promise<{ head: Buffer, whole: Readable }> {
  const chunks = stream[Symbol.asyncIterator]()
  const first: Buffer[] = []
  let length = 0
  while (length < bytes) {
    const next = await nextOrAbort(chunks, signal)
    if (next.done === true) break
    first.push(next.value as Buffer)
    length += (next.value as Buffer).length
  }
  const whole = Readable.from((async function * () {
    yield * first
    for (let next = await chunks.next(); next.done !== true; next = await chunks.next()) yield next.value as Buffer
  })(), { objectMode: false })
  whole.on('close', () => { if (!stream.destroyed) stream.destroy() })
  return { head: Buffer.concat(first), whole }
}

async function sniffOrRefuse (sink: Sink, { anyBytes = false }: SpoolLimits): Promise<Media | undefined> {
  if (sink.size === 0 && !anyBytes) throw new errors.UnsupportedMedia('the source is empty')
  const media = sniff(sink.head())
  if (media === undefined && !anyBytes) throw new errors.UnsupportedMedia('not an image or video format thumbd reads')
  // A tool reads these, from a file of its own (videos: MP4 may keep its index at the end).
  if (media?.kind === 'video' || media?.kind === 'audio' || media?.format === 'heic') await sink.toFile()
  return media
}
