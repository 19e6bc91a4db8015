// Asynchronous jobs on the embedded queue (PGlite in JOBS_DATA_DIR), one app for the file (the first open of a
// fresh database costs ~10 s here): submit, poll to done, outputs whole in a directory destination, manifest
// last, the signed webhook; idempotency, conflicts, other keys, cancelling, a bad source, an upload.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { after, before, describe, test, type TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import sharp from 'sharp'
import { AUTH } from '../helper.ts'
import { media } from '../media.ts'
import { verify } from '../../src/batch/webhook.ts'
import { buildJobsApp, eventually, jobsEnv, OTHER, settled, submit, WEBHOOK_KEY, type JobsEnv } from './jobs-helper.ts'

describe('asynchronous jobs, embedded queue', () => {
  // The file's app and servers end with the suite: their t.after() calls gathered here, run in reverse.
  const cleanups: Array<() => unknown> = []
  const suite = { after: (fn: () => unknown) => { cleanups.push(fn) } } as unknown as TestContext
  after(async () => { for (const fn of cleanups.reverse()) await fn() })
  let app: FastifyInstance
  let env: JobsEnv
  let video: Buffer
  let photo: Buffer

  before(async () => {
    video = await media('mp4-h264')
    photo = await media('jpeg')
    env = await jobsEnv(suite, { 'v.mp4': video, 'p.jpg': photo })
    app = await buildJobsApp(suite, env.env)
  })

  const hooksFor = (id: string) => env.receiver.received.filter(r => JSON.parse(r.body).id === id)

  test('a video job writes its poster, storyboard (sprite + VTT), preview, hashes and info, then its manifest, and calls its signed webhook', async () => {
    const { root, origin, receiver } = env
    const res = await submit(app, {
      source: { url: `${origin}/v.mp4` },
      destination: `file://${root}/v1`,
      outputs: [
        { kind: 'still', name: 'poster', at: '50%', width: 200 },
        { kind: 'storyboard', count: 6, columns: 3, width: 80 },
        { kind: 'preview', frames: 8, width: 96 },
        { kind: 'hashes', algorithms: ['sha256', 'md5'] },
        { kind: 'info' }
      ],
      webhook: { url: receiver.url }
    })
    assert.equal(res.statusCode, 202, res.body)
    const { id, status } = res.json()
    assert.equal(status, `/api/jobs/${id}`)
    assert.equal(res.headers.location, status)

    // While it runs: whenever manifest.json is there, every output is there already (the manifest comes last).
    const dir = join(root, 'v1')
    let early: string[] | undefined
    const watching = { on: true }
    const watcher = (async () => {
      while (watching.on) {
        const seen = await readdir(dir).catch(() => [] as string[])
        if (seen.includes('manifest.json') && seen.filter(f => !f.endsWith('.partial')).length < 7) early ??= seen
        await new Promise(resolve => setTimeout(resolve, 20))
      }
    })()
    const done = await settled(app, id)
    watching.on = false
    await watcher
    assert.equal(early, undefined, `manifest.json before the outputs: ${early}`)
    assert.equal(done.state, 'done', JSON.stringify(done))
    assert.deepEqual(done.progress, { done: 5, total: 5 })
    assert.equal(done.attempts, 1)
    const files = await readdir(dir)
    assert.deepEqual(files.sort(), ['hashes.json', 'info.json', 'manifest.json', 'poster.jpg', 'preview.webp', 'storyboard.jpg', 'storyboard.vtt'])
    assert.equal((await sharp(join(dir, 'poster.jpg')).metadata()).width, 200)
    assert.equal((await sharp(join(dir, 'storyboard.jpg')).metadata()).width, 240, '3 columns of 80 px')
    assert.equal((await readFile(join(dir, 'storyboard.vtt'), 'utf8')).match(/storyboard\.jpg#xywh=/g)?.length, 6)
    assert.equal((await sharp(join(dir, 'preview.webp'), { animated: true }).metadata()).pages, 8)
    const hashes = JSON.parse(await readFile(join(dir, 'hashes.json'), 'utf8'))
    assert.equal(hashes.digests.sha256, createHash('sha256').update(video).digest('hex'))
    assert.equal(hashes.digests.md5, createHash('md5').update(video).digest('hex'))
    assert.match(hashes.perceptual.phash, /^[0-9a-f]{16}$/)
    assert.equal(JSON.parse(await readFile(join(dir, 'info.json'), 'utf8')).kind, 'video')
    // Each file reported with its place, size and ETag; the manifest is the last written and says the same.
    for (const output of done.outputs) {
      for (const file of output.files) {
        assert.equal((await stat(new URL(file.location))).size, file.size, file.location)
        assert.match(file.etag, /^"[0-9a-f]{32}"$/)
      }
    }
    const manifestAt = (await stat(join(dir, 'manifest.json'))).mtimeMs
    for (const file of files) assert.ok((await stat(join(dir, file))).mtimeMs <= manifestAt, file)
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'))
    assert.equal(manifest.id, id)
    assert.deepEqual(manifest.outputs, done.outputs)

    // The webhook: once, signed over "t.body" with the key, carrying the job's id and state.
    await eventually(() => hooksFor(id).length > 0, 15_000, 'the webhook')
    const [hook] = hooksFor(id)
    const body = JSON.parse(hook!.body)
    assert.equal(body.type, 'job.done')
    assert.equal(body.outputs.length, 5)
    const signature = String(hook!.headers['thumbd-signature'])
    assert.match(signature, /^t=\d+,v1=[0-9a-f]{64}$/)
    assert.ok(verify(signature, hook!.body, WEBHOOK_KEY))
    assert.ok(!verify(signature, hook!.body, 'another-key'))
    assert.ok(!verify(signature, hook!.body.replace('job.done', 'job.fail'), WEBHOOK_KEY))
    assert.equal(hooksFor(id).length, 1)
  })

  test('an Idempotency-Key gives the same job for the same request, 409 JOB_CONFLICT for another; another key sees none of it', async () => {
    const request = { source: { url: `${env.origin}/p.jpg` }, destination: `file://${env.root}/idem`, outputs: [{ kind: 'variant', width: 64 }] }
    const first = await submit(app, request, { 'idempotency-key': 'import-42' })
    assert.equal(first.statusCode, 202, first.body)
    const again = await submit(app, { ...request, outputs: [{ width: 64, kind: 'variant' }] }, { 'idempotency-key': 'import-42' })
    assert.equal(again.statusCode, 202)
    assert.equal(again.json().id, first.json().id)
    assert.equal(again.headers['idempotent-replayed'], 'true')
    const other = await submit(app, { ...request, outputs: [{ kind: 'variant', width: 65 }] }, { 'idempotency-key': 'import-42' })
    assert.equal(other.statusCode, 409)
    assert.equal(other.json().code, 'THUMBD_JOB_CONFLICT')
    // The same Idempotency-Key under another API key is that key's own job.
    const theirs = await app.inject({ method: 'POST', url: '/api/jobs', headers: { ...OTHER, 'idempotency-key': 'import-42' }, payload: request })
    assert.equal(theirs.statusCode, 202)
    assert.notEqual(theirs.json().id, first.json().id)

    const id = first.json().id
    for (const method of ['GET', 'DELETE'] as const) {
      const hidden = await app.inject({ method, url: `/api/jobs/${id}`, headers: OTHER })
      assert.equal(hidden.statusCode, 404, method)
      assert.equal(hidden.json().code, 'THUMBD_JOB_NOT_FOUND')
    }
    const done = await settled(app, id)
    assert.equal(done.state, 'done', JSON.stringify(done))
    assert.equal((await sharp(join(env.root, 'idem', 'variant.jpg')).metadata()).width, 64)
    assert.equal((await app.inject({ method: 'GET', url: '/api/jobs/00000000-0000-4000-8000-000000000000', headers: AUTH })).statusCode, 404)
  })

  test('a source that answers 404 fails the job at once, without retries, with its error; the webhook says so', async () => {
    const res = await submit(app, { source: { url: `${env.origin}/missing.mp4` }, destination: `file://${env.root}/bad`, outputs: [{ kind: 'info' }], webhook: { url: env.receiver.url } })
    assert.equal(res.statusCode, 202, res.body)
    const started = Date.now()
    const failed = await settled(app, res.json().id)
    assert.equal(failed.state, 'failed')
    assert.equal(failed.attempts, 1)
    assert.equal(failed.error.code, 'THUMBD_SOURCE_FETCH_FAILED')
    assert.match(failed.error.message, /404/)
    assert.ok(Date.now() - started < 5000, 'no retry backoff (5 s) was waited')
    assert.ok(!existsSync(join(env.root, 'bad', 'manifest.json')))
    await eventually(() => hooksFor(failed.id).length > 0, 15_000, 'the failure webhook')
    assert.equal(JSON.parse(hooksFor(failed.id)[0]!.body).type, 'job.failed')
  })

  test('DELETE cancels a running job: it stays cancelled, writes nothing, frees its slot for the next job, and its webhook says so, signed', async () => {
    const res = await submit(app, { source: { url: `${env.origin}/slow` }, destination: `file://${env.root}/cancel`, outputs: [{ kind: 'info' }], webhook: { url: env.receiver.url } })
    const { id } = res.json()
    await eventually(async () => (await app.inject({ method: 'GET', url: `/api/jobs/${id}`, headers: AUTH })).json().state === 'running', 15_000, 'the job running')
    const cancelled = await app.inject({ method: 'DELETE', url: `/api/jobs/${id}`, headers: AUTH })
    assert.equal(cancelled.statusCode, 200)
    assert.equal(cancelled.json().state, 'cancelled')
    // JOB_CONCURRENCY is 1: the next job runs only once the cancelled one has let go (within half a lease).
    const next = await submit(app, { source: { url: `${env.origin}/p.jpg` }, destination: `file://${env.root}/after-cancel`, outputs: [{ kind: 'info' }] })
    assert.equal((await settled(app, next.json().id, 30_000)).state, 'done')
    assert.equal((await app.inject({ method: 'GET', url: `/api/jobs/${id}`, headers: AUTH })).json().state, 'cancelled')
    assert.ok(!existsSync(join(env.root, 'cancel', 'manifest.json')))
    await eventually(() => hooksFor(id).length > 0, 15_000, 'the cancel webhook')
    const [hook] = hooksFor(id)
    assert.deepEqual(JSON.parse(hook!.body), { type: 'job.cancelled', id, state: 'cancelled', outputs: [] })
    assert.ok(verify(String(hook!.headers['thumbd-signature']), hook!.body, WEBHOOK_KEY))
    // The aborted attempt announces nothing of its own: one webhook, the cancel's.
    await new Promise(resolve => setTimeout(resolve, 1500))
    assert.equal(hooksFor(id).length, 1)
  })

  test('an upload (multipart: the job field, then the file) waits in the destination until its job ends, then goes', async () => {
    const boundary = 'thumbd-test-boundary'
    const job = JSON.stringify({ destination: `file://${env.root}/up`, outputs: [{ kind: 'variant', name: 'small', width: 32, format: 'webp' }, { kind: 'storyboard' }] })
    const payload = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="job"\r\n\r\n${job}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`),
      photo,
      Buffer.from(`\r\n--${boundary}--\r\n`)
    ])
    const res = await app.inject({ method: 'POST', url: '/api/jobs', headers: { ...AUTH, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload })
    assert.equal(res.statusCode, 202, res.body)
    const done = await settled(app, res.json().id)
    assert.equal(done.state, 'done', JSON.stringify(done))
    assert.equal((await sharp(join(env.root, 'up', 'small.webp')).metadata()).width, 32)
    // A storyboard of a photo is that output's error, not the job's.
    assert.equal(done.outputs[1].error.code, 'THUMBD_UNSUPPORTED_MEDIA')
    assert.deepEqual((await readdir(join(env.root, 'up'))).sort(), ['manifest.json', 'small.webp'])
  })

  test('refused at once: a destination outside JOBS_DESTINATION_ROOT, a private webhook URL not allowed, no outputs; the metrics and the OpenAPI document', async () => {
    const base = { source: { url: `${env.origin}/p.jpg` }, outputs: [{ kind: 'info' }] }
    const outside = await submit(app, { ...base, destination: 'file:///etc/thumbd' })
    assert.equal(outside.statusCode, 400)
    assert.equal(outside.json().code, 'THUMBD_SOURCE_FORBIDDEN')
    const webhook = await submit(app, { ...base, destination: `file://${env.root}/x`, webhook: { url: 'http://169.254.169.254/latest' } })
    assert.equal(webhook.json().code, 'THUMBD_SOURCE_FORBIDDEN')
    const none = await submit(app, { ...base, destination: `file://${env.root}/x`, outputs: [] })
    assert.equal(none.json().code, 'THUMBD_BAD_OPTIONS')
    const metrics = await app.inject({ method: 'GET', url: '/metrics' })
    assert.match(metrics.body, /thumbd_async_jobs\{state="done"\} \d+/)
    assert.match(metrics.body, /thumbd_async_job_oldest_queued_seconds \d/)
    const doc = (await app.inject({ url: '/openapi.json' })).json()
    const post = doc.paths['/api/jobs'].post
    assert.ok(post.requestBody.content['application/json'].schema.properties.outputs, 'the job request\'s schema')
    assert.ok(post.responses['202'] && post.responses['409'], 'POST /api/jobs: 202, 409')
    for (const method of ['get', 'delete']) assert.ok(doc.paths['/api/jobs/{id}'][method].responses['404'], `${method} /api/jobs/{id}: 404`)
  })
})
