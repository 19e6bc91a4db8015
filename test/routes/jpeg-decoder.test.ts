// JPEG_DECODER and JPEG_SHRINK through the real app and pool: the default thumbnail of a camera-size JPEG is
// byte for byte sharp's; imgproxy's scale, decoded by libturbojpeg in a pool thread, gives another one.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { build, leftoverTempFiles, thumbnailOf } from '../helper.ts'

const run = promisify(execFile)

test('JPEG_DECODER=turbojpeg answers sharp\'s thumbnail; JPEG_SHRINK=imgproxy decodes at 1/8 in the pool', async (t) => {
  const { stdout: photo } = await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=2560x1600:rate=1', '-frames:v', '1',
    '-vf', 'noise=alls=24:allf=u', '-pix_fmt', 'yuvj420p', '-q:v', '3', '-c:v', 'mjpeg', '-f', 'image2pipe', 'pipe:1'], { encoding: 'buffer', maxBuffer: 64 << 20 })
  const thumbnail = async (env: Record<string, string>) => {
    const app = await build(t, env)
    const bytes = await thumbnailOf(app, photo, 'image/jpeg', '?width=320')
    assert.deepEqual(leftoverTempFiles(app), [])
    return bytes
  }
  const bySharp = await thumbnail({ JPEG_DECODER: 'sharp' })
  assert.ok((await thumbnail({})).equals(bySharp), 'the default decoder: sharp\'s very bytes')
  assert.ok(!(await thumbnail({ JPEG_SHRINK: 'imgproxy' })).equals(bySharp), 'imgproxy\'s scale: another (softer) thumbnail')
})

test('JPEG_DECODER and JPEG_SHRINK refuse values they do not know', async (t) => {
  await assert.rejects(build(t, { JPEG_DECODER: 'libjpeg' }), /JPEG_DECODER/)
  await assert.rejects(build(t, { JPEG_SHRINK: 'fast' }), /JPEG_SHRINK/)
})
