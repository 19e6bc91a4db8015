// Slabs (src/sources/slabs.ts): the shared memory photos are gathered on and read from by their pool thread.
// A slab must never be filled with another photo while anything may still read it: its source (until the
// request is done) or a job attempt (until its thread answers, whenever the main thread stopped waiting).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Readable } from 'node:stream'
import { SlabPool, slabs } from '../../src/sources/slabs.ts'
import { spool } from '../../src/sources/spool.ts'
import { TempDir } from '../../src/sources/temp-dir.ts'
import { build, postMedia } from '../helper.ts'
import { media } from '../media.ts'
import { tempFolder } from '../temp-folder.ts'

test('a slab is filled again only once its source and every job holding it are done; a release twice counts once', () => {
  const pool = new SlabPool()
  const first = pool.take(100_000)
  assert.equal(first.bytes.byteLength, 100_000)
  assert.ok(first.bytes.buffer instanceof SharedArrayBuffer)
  const job = pool.hold(first.bytes)
  assert.ok(job !== undefined)
  first.release()
  first.release()
  const second = pool.take(100_000)
  assert.notEqual(second.bytes.buffer, first.bytes.buffer, 'still read by its job')
  job()
  const third = pool.take(90_000)
  assert.equal(third.bytes.buffer, first.bytes.buffer, 'free again, and of the same size class')
  assert.equal(pool.hold(new Uint8Array(10)), undefined, 'bytes on no slab are not held')
  second.release()
  third.release()
  assert.equal(pool.freeSlabBytes, 2 * 131_072)
  assert.equal(pool.slabsInUse, 0)
})

test('a photo asked without If-None-Match is gathered on a slab its pool thread reads, and the slab is free again once the reply is sent', async (t) => {
  const app = await build(t)
  const photo = await media('jpeg-large')
  // Warm: the slab of the first request is free after it.
  assert.equal((await postMedia(app, 'thumbnail', photo, 'image/jpeg')).statusCode, 200)
  const free = slabs.freeSlabBytes
  assert.ok(free >= photo.length, `free slab bytes ${free}`)
  const replies = await Promise.all([1, 2, 3].map(() => postMedia(app, 'thumbnail', photo, 'image/jpeg')))
  assert.deepEqual(replies.map(r => r.statusCode), [200, 200, 200])
  assert.equal(new Set(replies.map(r => r.rawPayload.toString('base64'))).size, 1, 'the same thumbnail from each slab')
  // The jobs answered, the replies are sent: every slab is back (piscina settles a task just after its answer).
  for (let i = 0; i < 50 && slabs.slabsInUse > 0; i++) await new Promise(resolve => setTimeout(resolve, 10))
  assert.equal(slabs.slabsInUse, 0)
  assert.ok(slabs.freeSlabBytes >= free)
})

test('a photo of announced size is gathered on its slab as it comes; more or fewer bytes than announced, or a video, still spool whole', async (t) => {
  const tempDir = await TempDir.create(tempFolder('thumbd-slabs-', t))
  const photo = await media('jpeg-large')
  const video = await media('mp4-h264')
  const chunked = (bytes: Buffer) => Readable.from(Array.from({ length: Math.ceil(bytes.length / 65536) }, (_, i) => bytes.subarray(i * 65536, (i + 1) * 65536)))
  const limits = { maxBytes: 64 << 20, memoryBytes: 16 << 20, tempDir, hashInJob: true }
  for (const announced of [photo.length, photo.length - 1000, photo.length + 1000, undefined]) {
    const inUse = slabs.slabsInUse
    const source = await spool(chunked(photo), { ...limits, declaredBytes: announced })
    assert.equal(source.ref.location, 'memory')
    const { bytes } = source.ref as { bytes: Uint8Array }
    assert.ok(bytes.buffer instanceof SharedArrayBuffer, `${announced}: on a slab`)
    assert.ok(Buffer.from(bytes).equals(photo), `${announced}: every byte, in order`)
    assert.equal(source.identity, undefined, 'hashed by its job')
    assert.equal(slabs.slabsInUse, inUse + 1, `${announced}: one slab, the one it is on`)
    await source.dispose()
    assert.equal(slabs.slabsInUse, inUse)
  }
  // A video goes to its temp file (the slab taken for its announced size goes back), hashed as it streams.
  const inUse = slabs.slabsInUse
  const moved = await spool(chunked(video), { ...limits, declaredBytes: video.length })
  assert.equal(moved.ref.location, 'file')
  assert.equal(slabs.slabsInUse, inUse)
  assert.match(String(moved.identity), /^[0-9a-f]{64}$/)
  await moved.dispose()
})
