// Slabs (src/sources/slabs.ts): the shared memory photos are gathered on and read from by their pool thread.
// A slab must never be filled with another photo while anything may still read it: its source (until the
// request is done) or a job attempt (until its thread answers, whenever the main thread stopped waiting).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SlabPool, slabs } from '../../src/sources/slabs.ts'
import { build, postMedia } from '../helper.ts'
import { media } from '../media.ts'

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
  assert.throws(() => pool.hold(new Uint8Array(new SharedArrayBuffer(16))), /already given back/, 'a slab nothing uses is never handed to a job')
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
