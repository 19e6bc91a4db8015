// Gathering a source on its slab (src/sources/slab-copy.ts, sink.ts): every byte where it belongs whatever the
// chunks' alignment, nothing written past the slab's view, the chunks of a fetched body given back at once, and
// a fetched body of announced size put on its slab as it comes (spool.ts restOntoSlab).
import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import { test } from 'node:test'
import { copyChunks } from '../../src/sources/slab-copy.ts'
import { slabs } from '../../src/sources/slabs.ts'
import { spool } from '../../src/sources/spool.ts'
import { TempDir } from '../../src/sources/temp-dir.ts'
import { media } from '../media.ts'
import { tempFolder } from '../temp-folder.ts'

test('chunks of any length and alignment land one after the other, and more than the target holds is refused', () => {
  const source = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7 + 3) & 255))
  // Odd offsets and lengths, an empty chunk, a chunk sharing its buffer with bytes before it (a body's head).
  const chunks = [source.subarray(0, 1), source.subarray(1, 1), source.subarray(1, 4099), source.subarray(4099, 69_997), source.subarray(69_997)]
  const slab = new SharedArrayBuffer(70_016)
  const guard = new Uint8Array(slab)
  guard.fill(0xee)
  const target = new Uint8Array(slab, 3, 70_000)
  copyChunks(target, chunks)
  assert.ok(Buffer.from(target).equals(source))
  assert.deepEqual([guard[0], guard[1], guard[2], guard[70_003], guard[70_015]], [0xee, 0xee, 0xee, 0xee, 0xee], 'nothing written outside the view')
  assert.throws(() => copyChunks(new Uint8Array(new SharedArrayBuffer(69_999)), chunks), RangeError)
})

test('a fetched body (ownsChunks) gives its chunks\' memory back once on the slab; any other keeps them', async (t) => {
  const photo = await media('jpeg')
  const tempDir = await TempDir.create(tempFolder('thumbd-slab-copy-', t))
  // Chunks that are each the whole of their own ArrayBuffer, as undici's slices of its socket reads are.
  const chunksOf = () => [photo.subarray(0, 1000), photo.subarray(1000)].map(part => Buffer.from(new Uint8Array(part).buffer))
  const limits = { maxBytes: 1 << 20, memoryBytes: 1 << 20, tempDir, hashInJob: true }

  const owned = chunksOf()
  const taken = await spool(Readable.from(owned), { ...limits, ownsChunks: true })
  assert.equal(taken.ref.location, 'memory')
  assert.ok(taken.ref.location === 'memory' && Buffer.from(taken.ref.bytes).equals(photo), 'the bytes are whole on the slab')
  assert.ok(taken.ref.location === 'memory' && taken.ref.bytes.buffer instanceof SharedArrayBuffer)
  assert.deepEqual(owned.map(chunk => chunk.buffer.detached), [true, true], 'their memory is given back')
  await taken.dispose()

  const kept = chunksOf()
  const other = await spool(Readable.from(kept), limits)
  assert.ok(other.ref.location === 'memory' && Buffer.from(other.ref.bytes).equals(photo))
  assert.deepEqual(kept.map(chunk => chunk.buffer.detached), [false, false], 'an upload\'s chunks are left as they are')
  await other.dispose()
  await tempDir.destroy()
})

/**
 * `photo` in owned chunks of `size` bytes, pushed as undici pushes a body: one per socket read, and the buffer
 * under a chunk still read by its parser right after the push returns. Each records whether it was still whole
 * then, and whether the one before had been freed by the time it was pushed.
 */
function pushedLikeUndici (photo: Buffer, size: number) {
  const chunks: Array<Buffer<ArrayBuffer>> = []
  for (let at = 0; at < photo.length; at += size) chunks.push(Buffer.from(new Uint8Array(photo.subarray(at, at + size)).buffer))
  const wholeAfterPush: boolean[] = []
  const freedByNext: boolean[] = []
  const stream = new Readable({ read () {} })
  const pushed = (async () => {
    for (const [i, chunk] of chunks.entries()) {
      if (stream.destroyed) return
      stream.push(chunk)
      wholeAfterPush.push(!chunk.buffer.detached)
      if (i > 0) freedByNext.push(chunks[i - 1]!.buffer.detached)
      await new Promise(resolve => setImmediate(resolve))
    }
    stream.push(null)
  })()
  return { chunks, stream, wholeAfterPush, freedByNext, pushed }
}

test('a fetched photo of announced size goes onto its slab as it comes: each chunk freed once the next comes, never under its parser', async (t) => {
  const photo = await media('jpeg')
  const tempDir = await TempDir.create(tempFolder('thumbd-slab-fill-', t))
  const limits = { maxBytes: 1 << 20, memoryBytes: 1 << 20, tempDir, hashInJob: true, ownsChunks: true }
  const { chunks, stream, wholeAfterPush, freedByNext, pushed } = pushedLikeUndici(photo, 5000)
  assert.ok(chunks.length >= 4, 'several chunks')
  const taken = await spool(stream, { ...limits, declaredBytes: photo.length })
  await pushed
  assert.ok(taken.ref.location === 'memory' && Buffer.from(taken.ref.bytes).equals(photo), 'the bytes are whole on the slab')
  assert.ok(taken.ref.location === 'memory' && taken.ref.bytes.buffer instanceof SharedArrayBuffer)
  assert.deepEqual(wholeAfterPush, chunks.map(() => true), 'no chunk freed while its pusher still reads it')
  assert.deepEqual(freedByNext, freedByNext.map(() => true), 'freed as they came, not at the end')
  assert.deepEqual(chunks.map(chunk => chunk.buffer.detached), chunks.map(() => true), 'the last one too, once the body ended')
  await taken.dispose()
  await tempDir.destroy()
})

test('a fetched body longer than it announced is refused with SOURCE_FETCH_FAILED, and its slab is given back', async (t) => {
  const photo = await media('jpeg')
  const tempDir = await TempDir.create(tempFolder('thumbd-slab-fill-', t))
  const before = slabs.slabsInUse
  const { stream, pushed } = pushedLikeUndici(photo, 5000)
  await assert.rejects(spool(stream, { maxBytes: 1 << 20, memoryBytes: 1 << 20, tempDir, hashInJob: true, ownsChunks: true, declaredBytes: photo.length - 1 }),
    (err: { code?: string }) => err.code === 'THUMBD_SOURCE_FETCH_FAILED')
  assert.equal(slabs.slabsInUse, before)
  assert.ok(stream.destroyed, 'the body is dropped')
  await pushed
  await tempDir.destroy()
})
