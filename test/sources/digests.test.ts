// StreamDigests against the real digest thread (workers/digest.ts in a real piscina pool): the digests of
// large sources must equal Node crypto's over the same bytes, however the chunks fall, and a source that
// fails or loses its thread must end its task rather than hang.
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { test, type TestContext } from 'node:test'
import type { MessagePort } from 'node:worker_threads'
import { Piscina } from 'piscina'
import { HASH_HERE_BYTES, OFFLOAD_BYTES, StreamDigests, type RunDigestTask } from '../../src/sources/digests.ts'
import type { DigestResult, DigestTask } from '../../contract/digest.ts'

const ALL = ['sha256', 'sha512', 'sha1', 'md5', 'blake2b512', 'sha3-256']
/** A lower threshold than the server's (OFFLOAD_BYTES), so the tests cross it with small sources. */
const T = 4 << 20

function digestPool (t: TestContext) {
  const pool = new Piscina<DigestTask, DigestResult>({
    filename: new URL('../../workers/digest.ts', import.meta.url).href,
    minThreads: 0,
    maxThreads: 1,
    concurrentTasksPerWorker: 64,
    workerData: { niceness: 0 }
  })
  t.after(() => pool.destroy())
  const results: Array<Promise<DigestResult>> = []
  const runTask: RunDigestTask = (task, transferList: MessagePort[]) => {
    const result = pool.run(task, { transferList })
    results.push(result)
    return result
  }
  return { pool, runTask, results }
}

/** Splits bytes into chunks of uneven sizes, as a socket would deliver them. */
function * unevenChunks (bytes: Buffer): Generator<Buffer> {
  const sizes = [1, 65536, 7, 300_000, 1 << 20, 12_345]
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length]!
    yield bytes.subarray(at, at + size)
    at += size
  }
}

test('digests equal Node crypto on both sides of the offload threshold, with and without the digest thread', async (t) => {
  const { runTask, results } = digestPool(t)
  for (const size of [0, 5, T - 1, T, T + 1, 13 * 2 ** 20 + 7]) {
    const bytes = randomBytes(size)
    for (const offload of [runTask, undefined]) {
      const digests = new StreamDigests(ALL, offload, undefined, T)
      for (const chunk of unevenChunks(bytes)) await digests.update(chunk)
      const got = await digests.finish()
      for (const algorithm of ALL) assert.equal(got[algorithm], createHash(algorithm).update(bytes).digest('hex'), `${algorithm}, ${size} bytes, ${offload === undefined ? 'here' : 'digest thread'}`)
    }
  }
  // Only sources past the threshold went to the thread.
  assert.equal(results.length, 2)
})

test('a source announced past the threshold goes to the digest thread from its first byte, whatever it turns out to be', async (t) => {
  const { runTask, results } = digestPool(t)
  for (const size of [0, 1000, 5 << 20]) {
    const bytes = randomBytes(size)
    const digests = new StreamDigests(['sha256', 'md5'], runTask, 5 << 20, T)
    assert.equal(results.length, 1, 'the task starts before any byte')
    for (const chunk of unevenChunks(bytes)) await digests.update(chunk)
    const got = await digests.finish()
    assert.equal(got.sha256, createHash('sha256').update(bytes).digest('hex'), `${size} bytes`)
    assert.equal(got.md5, createHash('md5').update(bytes).digest('hex'), `${size} bytes`)
    results.length = 0
  }
  // A body announced under the threshold stays here: it cannot pass the threshold.
  const small = new StreamDigests(['sha256'], runTask, 1000, T)
  await small.update(randomBytes(1000))
  await small.finish()
  assert.equal(results.length, 0)
  // With the server's threshold, a 12 MB video is hashed here too, and one announced past it goes out.
  const video = new StreamDigests(['sha256'], runTask, 12 << 20)
  for (const chunk of unevenChunks(randomBytes(12 << 20))) await video.update(chunk)
  await video.finish()
  assert.equal(results.length, 0)
  await new StreamDigests(['sha256'], runTask, OFFLOAD_BYTES + 1).finish()
  assert.equal(results.length, 1)
})

test('sources that stay under the threshold take no memory for the digest thread', async (t) => {
  // Each small upload once allocated a 1 MiB batch it never used: at a few hundred photos a second that was
  // enough external memory to run V8's full GC several times a second on the main thread.
  const { runTask } = digestPool(t)
  const before = process.memoryUsage().arrayBuffers
  const open = Array.from({ length: 64 }, () => new StreamDigests(['sha256'], runTask, undefined, T))
  for (const digests of open) await digests.update(randomBytes(1000))
  const grown = process.memoryUsage().arrayBuffers - before
  assert.ok(grown < 4 << 20, `64 small sources hold ${(grown / 2 ** 20).toFixed(1)} MiB of buffers`)
  for (const digests of open) await digests.finish()
})

test('a source that fills the digest thread faster than it hashes is held back, not queued whole', async (t) => {
  const { runTask } = digestPool(t)
  const digests = new StreamDigests(['sha3-256'], runTask, undefined, T)
  const bytes = randomBytes(32 * 2 ** 20)
  let heldBack = 0
  for (let at = 0; at < bytes.length; at += 1 << 20) {
    const wait = digests.update(bytes.subarray(at, at + (1 << 20)))
    if (wait !== undefined) {
      heldBack++
      await wait
    }
  }
  assert.ok(heldBack > 0, 'update() asked the sender to wait at least once')
  assert.equal((await digests.finish())['sha3-256'], createHash('sha3-256').update(bytes).digest('hex'))
})

test('an aborted source ends its digest task; a digest thread that goes away fails the source instead of hanging it', async (t) => {
  const { pool, runTask, results } = digestPool(t)
  const aborted = new StreamDigests(['sha256'], runTask, undefined, T)
  await aborted.update(randomBytes(5 * 2 ** 20))
  aborted.abort()
  aborted.abort()
  assert.equal(await results[0], null)

  const orphaned = new StreamDigests(['sha256'], runTask, undefined, T)
  await orphaned.update(randomBytes(5 * 2 ** 20))
  await pool.destroy()
  await assert.rejects(async () => {
    for (let i = 0; i < 64; i++) await orphaned.update(randomBytes(1 << 20))
    await orphaned.finish()
  })
})

test('a source kept whole in memory moves to the digest thread at the end and back, with the same digests, until it passes deferBytes', async (t) => {
  const { runTask, results } = digestPool(t)
  const D = 2 << 20
  for (const size of [0, 5, HASH_HERE_BYTES, D - 1, D, D + 1, 3 * D + 7]) {
    const bytes = randomBytes(size)
    for (const algorithms of [['sha256'], ['sha256', 'sha512', 'sha1'], ['sha256', 'md5']]) {
      const digests = new StreamDigests(algorithms, runTask, undefined, T, D)
      for (const chunk of unevenChunks(bytes)) await digests.update(chunk)
      const whole = owning(bytes)
      const got = await digests.finishWhole(whole)
      for (const algorithm of algorithms) assert.equal(got.digests[algorithm], createHash(algorithm).update(bytes).digest('hex'), `${algorithm}, ${size} bytes`)
      assert.ok(Buffer.from(got.bytes).equals(bytes), `${size} bytes came back whole`)
      if (size >= HASH_HERE_BYTES && size <= D) assert.equal(whole.byteLength, 0, `${size} bytes moved, not copied`)
    }
  }
  // Sources under HASH_HERE_BYTES or past deferBytes were hashed here; those past the offload threshold streamed there.
  assert.equal(results.length, 3 * 3 + 3)
  // A source that went to a file stops deferring midway: what was held is hashed, then the rest as it comes.
  const bytes = randomBytes(D)
  const digests = new StreamDigests(['sha256'], runTask, undefined, T, D)
  await digests.update(bytes.subarray(0, 1000))
  await digests.stopDeferring()
  await digests.update(bytes.subarray(1000))
  assert.equal((await digests.finish()).sha256, createHash('sha256').update(bytes).digest('hex'))
})

test('a source kept whole in memory costs the main thread a fraction of hashing it there', async (t) => {
  // SHA-256 of each in-memory photo was ~0.65 ms of a URL request's ~3 ms on the main thread (src/sources/digests.ts).
  const { runTask } = digestPool(t)
  const bytes = randomBytes(16 << 20)
  const chunks = [...unevenChunks(bytes)]
  const mainCpu = async (work: () => Promise<unknown>) => {
    let best = Number.POSITIVE_INFINITY
    for (let i = 0; i < 3; i++) {
      const before = process.threadCpuUsage()
      await work()
      const used = process.threadCpuUsage(before)
      best = Math.min(best, used.user + used.system)
    }
    return best
  }
  const here = await mainCpu(async () => {
    const hash = createHash('sha256')
    for (const chunk of chunks) hash.update(chunk)
    return hash.digest('hex')
  })
  const wholes = Array.from({ length: 3 }, () => owning(bytes))
  let got: string | undefined
  const deferred = await mainCpu(async () => {
    const digests = new StreamDigests(['sha256'], runTask, undefined, OFFLOAD_BYTES, 16 << 20)
    for (const chunk of chunks) await digests.update(chunk)
    got = (await digests.finishWhole(wholes.pop()!)).digests.sha256
  })
  assert.equal(got, createHash('sha256').update(bytes).digest('hex'))
  assert.ok(deferred < here / 4, `main thread: ${(deferred / 1000).toFixed(1)} ms deferred against ${(here / 1000).toFixed(1)} ms hashing here`)
})

/** A copy of the bytes that owns its ArrayBuffer, as the spool's in-memory source does. */
function owning (bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(bytes.length)
  copy.set(bytes)
  return copy
}
