// /api/info: what a source is, from its headers, for images and videos, in every source form's way.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { build, postMedia } from '../helper.ts'
import { media } from '../media.ts'
import { tempFolder } from '../temp-folder.ts'

const run = promisify(execFile)

test('a video: container, codecs, display size after rotation, duration, frame rate, audio', async (t) => {
  const app = await build(t)
  const dir = tempFolder('thumbd-info-', t)
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=30000/1001:duration=2', '-f', 'lavfi', '-i', 'sine=d=2', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', join(dir, 'plain.mp4')])
  // A phone's portrait video: stored landscape, turned by the container's display matrix.
  await run('ffmpeg', ['-v', 'error', '-y', '-i', join(dir, 'plain.mp4'), '-c', 'copy', '-metadata:s:v:0', 'rotate=90', join(dir, 'turned.mp4')])
  const res = await postMedia(app, 'info', readFileSync(join(dir, 'turned.mp4')), 'video/mp4')
  assert.equal(res.statusCode, 200, res.body)
  const info = res.json()
  assert.equal(info.kind, 'video')
  assert.equal(info.format, 'mp4')
  assert.match(info.container, /mp4/)
  assert.equal(info.codec, 'h264')
  assert.deepEqual([info.width, info.height, info.rotation], [240, 320, 270])
  assert.ok(Math.abs(info.duration - 2) < 0.1, String(info.duration))
  assert.equal(info.frameRate, 29.97)
  assert.deepEqual(info.audio, { codec: 'aac' })
  const silent = (await postMedia(app, 'info', await media('webm-vp9'), 'video/webm')).json()
  assert.deepEqual([silent.codec, silent.audio, silent.rotation, silent.width], ['vp9', null, 0, 640])
})

test('an image: format, display size after EXIF orientation, animation frames; bad input as every route', async (t) => {
  const app = await build(t)
  // Stored 400x200, EXIF orientation 6: shown 200x400.
  const turned = await sharp({ create: { width: 400, height: 200, channels: 3, background: 'red' } }).withMetadata({ orientation: 6 }).jpeg().toBuffer()
  const info = (await postMedia(app, 'info', turned, 'image/jpeg')).json()
  assert.deepEqual([info.kind, info.format, info.width, info.height, info.orientation, info.size], ['image', 'jpeg', 200, 400, 6, turned.length])
  assert.equal((await postMedia(app, 'info', await media('gif'), 'image/gif')).json().pages, 5)
  assert.equal((await postMedia(app, 'info', Buffer.from('not media'), 'image/png')).statusCode, 415)
  assert.equal((await postMedia(app, 'info', await media('jpeg'), 'image/jpeg', '?width=3')).statusCode, 400, 'no options')
})
