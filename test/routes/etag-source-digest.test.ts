// The ETag of an image reply derives from the source's SHA-256. A request that asks nothing conditional has its
// in-memory source hashed by its job, in the pool thread (workers/dispatch.ts), not on the main thread or the
// digest thread before it; a conditional one is hashed before its job, so a match costs no job. Either way
// the tag must be the same one.
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { HASH_HERE_BYTES, type RunDigestTask } from '../../src/sources/digests.ts'
import { build, postMedia } from '../helper.ts'
import { media } from '../media.ts'

/** Counts the tasks the digest thread is given (the real thread still does them). */
function countDigestTasks (app: FastifyInstance): { count: number } {
  const counted = { count: 0 }
  const run = app.runDigestTask!
  app.runDigestTask = ((task, transferList) => { counted.count++; return run(task, transferList) }) satisfies RunDigestTask
  return counted
}

test('a photo in memory asked without If-None-Match is hashed by its job, not the digest thread; its ETag is the one a conditional request and a temp file get', async (t) => {
  // Past HASH_HERE_BYTES (128 KiB): such a photo was moved to the digest thread and back before its job.
  const photo = await media('jpeg-large')
  assert.ok(photo.length > HASH_HERE_BYTES, `${photo.length} bytes`)
  const app = await build(t)
  const digestTasks = countDigestTasks(app)
  for (const route of ['thumbnail', 'resize']) {
    const plain = await postMedia(app, route, photo, 'image/jpeg', '?width=100')
    assert.equal(plain.statusCode, 200, plain.body)
    assert.equal(digestTasks.count, 0, `${route}: no digest task for an unconditional request`)
    const conditional = await app.inject({ method: 'POST', url: `/api/${route}?width=100`, headers: { authorization: 'Bearer test-key-0123456789', 'content-type': 'image/jpeg', 'if-none-match': '"another"' }, payload: photo })
    assert.equal(conditional.statusCode, 200)
    assert.equal(conditional.headers.etag, plain.headers.etag, `${route}: the job's digest is the one hashed before the job`)
    assert.equal(digestTasks.count, 1, 'the conditional request was hashed before its job')
    digestTasks.count = 0
  }
  // A source spooled to a temp file is hashed as it streams in, on the main thread: the same tag.
  const spooled = await build(t, { MEMORY_SPOOL_BYTES: '1000' })
  const fromFile = await postMedia(spooled, 'thumbnail', photo, 'image/jpeg', '?width=100')
  const inMemory = await postMedia(app, 'thumbnail', photo, 'image/jpeg', '?width=100')
  assert.equal(fromFile.headers.etag, inMemory.headers.etag)
})

test('a GET URL whose job hashes its source: the requests that join it take the ETag from the result, a matching If-None-Match a 304 after it', async (t) => {
  const photo = await media('jpeg-large')
  const server = createServer((_req, res) => res.writeHead(200, { 'content-length': photo.length }).end(photo))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise(resolve => server.close(resolve)))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const key = Buffer.alloc(32, 1)
  const salt = Buffer.alloc(32, 2)
  // No memo: every request below is a miss, answered by its own fetch and job or by the one it joins.
  const app = await build(t, { URL_SIGNING_KEYS: key.toString('hex'), URL_SIGNING_SALTS: salt.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${base}/`, RESULT_CACHE_BYTES: '0' })
  const digestTasks = countDigestTasks(app)
  const url = signedUrlPath(`/rs:fit:200:0/plain/${base}/a.jpg@jpg`, key, salt)
  const first = await app.inject({ url })
  assert.equal(first.statusCode, 200, first.body)
  assert.equal(digestTasks.count, 0)
  const etag = String(first.headers.etag)
  // The first starts the shared fetch unconditionally (hashed by the job); the others join it.
  const [plain, matching, other] = await Promise.all([
    app.inject({ url }),
    app.inject({ url, headers: { 'if-none-match': etag } }),
    app.inject({ url, headers: { 'if-none-match': '"another"' } })
  ])
  assert.deepEqual([plain.statusCode, matching.statusCode, other.statusCode], [200, 304, 200])
  assert.deepEqual([plain.headers.etag, matching.headers.etag, other.headers.etag], [etag, etag, etag])
  // Conditional on its own, it is hashed before the job, and a match costs none.
  const jobs = () => app.jobs.stats().completed
  const before = jobs()
  const alone = await app.inject({ url, headers: { 'if-none-match': etag } })
  assert.equal(alone.statusCode, 304)
  assert.equal(jobs(), before, 'no job for a 304 asked alone')
  assert.equal(digestTasks.count, 1)
})

test('a conditional GET URL that joins work whose job hashes the source gets its 304 at once, not the job\'s failure', async (t) => {
  const photo = await media('jpeg-large')
  // The origin answers after 300 ms: the second request below joins the first's fetch.
  const server = createServer((_req, res) => { setTimeout(() => res.writeHead(200, { 'content-length': photo.length }).end(photo), 300) })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise(resolve => server.close(resolve)))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const key = Buffer.alloc(32, 1)
  const salt = Buffer.alloc(32, 2)
  const env = { URL_SIGNING_KEYS: key.toString('hex'), URL_SIGNING_SALTS: salt.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${base}/`, RESULT_CACHE_BYTES: '0' }
  const url = signedUrlPath(`/rs:fit:200:0/plain/${base}/a.jpg@jpg`, key, salt)
  const { headers: { etag } } = await (await build(t, env)).inject({ url })
  // Here the 6 MP photo is past MAX_INPUT_PIXELS: its job fails, and a client that has it already needs none.
  const app = await build(t, { ...env, MAX_INPUT_PIXELS: '1000000' })
  const plain = app.inject({ url })
  await new Promise(resolve => setTimeout(resolve, 50))
  const matching = await app.inject({ url, headers: { 'if-none-match': String(etag) } })
  assert.equal(matching.statusCode, 304, matching.body)
  assert.equal(matching.headers.etag, etag)
  assert.equal((await plain).statusCode, 413)
})
