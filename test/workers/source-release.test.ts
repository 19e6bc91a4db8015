import assert from 'node:assert/strict'
import { once } from 'node:events'
import { test } from 'node:test'
import { BroadcastChannel } from 'node:worker_threads'
import { AUTH, build, postMedia } from '../helper.ts'
import { SOURCE_CHANNEL, SOURCE_WATCHING_WORKER_FILE } from '../fixtures/source-watching-worker.ts'
import { media } from '../media.ts'

/** What the pool thread reported of the job's source once the job was over. */
async function bytesLeftAfter (request: () => Promise<{ statusCode: number }>): Promise<{ status: number, bytesLeft: number, onSlab: boolean }> {
  const channel = new BroadcastChannel(SOURCE_CHANNEL)
  try {
    const reported = once(channel, 'message')
    const { statusCode } = await request()
    const [message] = await reported as [{ data: { bytesLeft: number, onSlab: boolean } }]
    return { status: statusCode, bytesLeft: message.data.bytesLeft, onSlab: message.data.onSlab }
  } finally {
    channel.close()
  }
}

test('a pool thread gives back an image source moved to it as soon as its job succeeds, and keeps one whose job failed', async (t) => {
  const app = await build(t, {}, { workerFile: SOURCE_WATCHING_WORKER_FILE })
  const photo = await media('jpeg-large')
  // A conditional request is hashed before its job, and its bytes move to the pool thread, which owns them.
  const conditional = (body: Buffer) => () => app.inject({ method: 'POST', url: '/api/thumbnail', headers: { ...AUTH, 'content-type': 'image/jpeg', 'if-none-match': '"no-such-etag"' }, payload: body })
  const done = await bytesLeftAfter(conditional(photo))
  assert.deepEqual(done, { status: 200, bytesLeft: 0, onSlab: false }, 'freed at once, not at the thread\'s next GC')
  // A failed job may leave a decode running on libuv's threads that still reads the bytes: they stay.
  const truncated = photo.subarray(0, 4096)
  const failed = await bytesLeftAfter(conditional(truncated))
  assert.ok(failed.status >= 400 && failed.status < 500, `a 4xx: ${failed.status}`)
  assert.equal(failed.bytesLeft, truncated.byteLength)
  // An unconditional one is read where the main thread gathered it (a reused slab, handed back with its
  // request, test/sources/slabs.test.ts): the pool thread leaves it whole.
  const shared = await bytesLeftAfter(() => postMedia(app, 'thumbnail', photo, 'image/jpeg'))
  assert.deepEqual(shared, { status: 200, bytesLeft: photo.byteLength, onSlab: true })
})
