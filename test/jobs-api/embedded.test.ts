// Asynchronous jobs on the embedded queue (PGlite in JOBS_DATA_DIR): submit, poll to done, outputs whole in a
// directory destination, manifest last; the signed webhook, received and verified.
import assert from 'node:assert/strict'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import sharp from 'sharp'
import { media } from '../media.ts'
import { verify } from '../../src/batch/webhook.ts'
import { buildJobsApp, jobsEnv, settled, submit, WEBHOOK_KEY } from './jobs-helper.ts'

test('a video job writes its poster, storyboard (sprite + VTT), preview, hashes and info, then its manifest, and calls its signed webhook', async (t) => {
  const video = await media('mp4-h264')
  const { env, root, origin, receiver } = await jobsEnv(t, { 'v.mp4': video })
  const app = await buildJobsApp(t, env)
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

  const done = await settled(app, id)
  assert.equal(done.state, 'done', JSON.stringify(done))
  assert.deepEqual(done.progress, { done: 5, total: 5 })
  assert.equal(done.attempts, 1)
  const files = await readdir(join(root, 'v1'))
  assert.deepEqual(files.sort(), ['hashes.json', 'info.json', 'manifest.json', 'poster.jpg', 'preview.webp', 'storyboard.jpg', 'storyboard.vtt'])
  const poster = await sharp(join(root, 'v1', 'poster.jpg')).metadata()
  assert.equal(poster.width, 200)
  const board = await sharp(join(root, 'v1', 'storyboard.jpg')).metadata()
  assert.equal(board.width, 240, '3 columns of 80 px')
  const vtt = await readFile(join(root, 'v1', 'storyboard.vtt'), 'utf8')
  assert.equal(vtt.match(/storyboard\.jpg#xywh=/g)?.length, 6)
  const preview = await sharp(join(root, 'v1', 'preview.webp'), { animated: true }).metadata()
  assert.equal(preview.pages, 8)
  const hashes = JSON.parse(await readFile(join(root, 'v1', 'hashes.json'), 'utf8'))
  const { createHash } = await import('node:crypto')
  assert.equal(hashes.digests.sha256, createHash('sha256').update(video).digest('hex'))
  assert.equal(hashes.digests.md5, createHash('md5').update(video).digest('hex'))
  assert.match(hashes.perceptual.phash, /^[0-9a-f]{16}$/)
  const info = JSON.parse(await readFile(join(root, 'v1', 'info.json'), 'utf8'))
  assert.equal(info.kind, 'video')
  // Each file reported with its place, size and ETag; the manifest is the last written.
  for (const output of done.outputs) {
    for (const file of output.files) {
      assert.equal((await stat(new URL(file.location))).size, file.size, file.location)
      assert.match(file.etag, /^"[0-9a-f]{32}"$/)
    }
  }
  const manifestAt = (await stat(join(root, 'v1', 'manifest.json'))).mtimeMs
  for (const file of files) assert.ok((await stat(join(root, 'v1', file))).mtimeMs <= manifestAt, file)
  const manifest = JSON.parse(await readFile(join(root, 'v1', 'manifest.json'), 'utf8'))
  assert.equal(manifest.id, id)
  assert.deepEqual(manifest.outputs, done.outputs)

  // The webhook: once, signed over "t.body" with the key, carrying the job's id and state.
  const until = Date.now() + 15_000
  while (receiver.received.length === 0 && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 100))
  assert.equal(receiver.received.length, 1)
  const [hook] = receiver.received
  const body = JSON.parse(hook!.body)
  assert.equal(body.id, id)
  assert.equal(body.type, 'job.done')
  assert.equal(body.outputs.length, 5)
  const signature = String(hook!.headers['thumbd-signature'])
  assert.match(signature, /^t=\d+,v1=[0-9a-f]{64}$/)
  assert.ok(verify(signature, hook!.body, WEBHOOK_KEY))
  assert.ok(!verify(signature, hook!.body, 'another-key'))
  assert.ok(!verify(signature, hook!.body.replace('job.done', 'job.fail'), WEBHOOK_KEY))
})
