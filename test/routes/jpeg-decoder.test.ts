// JPEG_DECODER and JPEG_SHRINK through the real app and pool: the default thumbnail of a camera-size JPEG is
// byte for byte sharp's; imgproxy's scale, decoded by libturbojpeg in a pool thread, gives another one; the opt-in
// JPEG_DECODER=sandbox (native/image-decode) gives the same bytes as the pool thread's decode at either scale.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { fileOrigin } from '../file-origin.ts'
import { build, leftoverTempFiles, thumbnailOf } from '../helper.ts'

const run = promisify(execFile)

/** A camera-size JPEG (2560x1600): 320 px is a reduction of 8, decoded at 1/4 by sharp's rule, 1/8 by imgproxy's. */
async function cameraPhoto (): Promise<Buffer> {
  const { stdout } = await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=2560x1600:rate=1', '-frames:v', '1',
    '-vf', 'noise=alls=24:allf=u', '-pix_fmt', 'yuvj420p', '-q:v', '3', '-c:v', 'mjpeg', '-f', 'image2pipe', 'pipe:1'], { encoding: 'buffer', maxBuffer: 64 << 20 })
  return stdout
}

test('JPEG_DECODER=turbojpeg answers sharp\'s thumbnail; JPEG_SHRINK=imgproxy decodes at 1/8 in the pool', async (t) => {
  const photo = await cameraPhoto()
  const thumbnail = async (env: Record<string, string>) => {
    const app = await build(t, env)
    const bytes = await thumbnailOf(app, photo, 'image/jpeg', '?width=320')
    assert.deepEqual(leftoverTempFiles(app), [])
    return bytes
  }
  const bySharp = await thumbnail({ JPEG_DECODER: 'sharp' })
  assert.ok((await thumbnail({})).equals(bySharp), 'the default decoder: sharp\'s very bytes')
  const imgproxy = await thumbnail({ JPEG_SHRINK: 'imgproxy' })
  assert.ok(!imgproxy.equals(bySharp), 'imgproxy\'s scale: another (softer) thumbnail')
  // The opt-in sandboxed decode is the same libturbojpeg at the same scale: the same bytes, only elsewhere.
  assert.ok((await thumbnail({ JPEG_DECODER: 'sandbox' })).equals(bySharp), 'sandbox: sharp\'s very bytes')
  assert.ok((await thumbnail({ JPEG_DECODER: 'sandbox', JPEG_SHRINK: 'imgproxy' })).equals(imgproxy), 'sandbox: the pool thread\'s imgproxy-scale bytes')
})

test('JPEG_DECODER and JPEG_SHRINK refuse values they do not know', async (t) => {
  await assert.rejects(build(t, { JPEG_DECODER: 'libjpeg' }), /JPEG_DECODER/)
  await assert.rejects(build(t, { JPEG_SHRINK: 'fast' }), /JPEG_SHRINK/)
})

test('JPEG_SHRINK=auto (the default): a GET URL in imgproxy\'s dialect is decoded at imgproxy\'s scale, the API at sharp\'s', async (t) => {
  const photo = await cameraPhoto()
  const base = await fileOrigin(t, { 'photo.jpg': photo })
  const [key, salt] = ['aa'.repeat(32), 'bb'.repeat(32)]
  const served = async (env: Record<string, string>) => {
    const app = await build(t, { URL_SIGNING_KEYS: key, URL_SIGNING_SALTS: salt, ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${base}/`, ...env })
    const res = await app.inject({ url: signedUrlPath(`/rs:fit:320:0/plain/${base}/photo.jpg@jpg`, Buffer.from(key, 'hex'), Buffer.from(salt, 'hex')) })
    assert.equal(res.statusCode, 200, res.body)
    return { get: res.rawPayload, api: await thumbnailOf(app, photo, 'image/jpeg', '?width=320') }
  }
  const [auto, imgproxy, quality] = [await served({}), await served({ JPEG_SHRINK: 'imgproxy' }), await served({ JPEG_SHRINK: 'quality' })]
  assert.ok(auto.get.equals(imgproxy.get), 'GET: imgproxy\'s scale')
  assert.ok(!auto.get.equals(quality.get), 'GET: not sharp\'s scale')
  assert.ok(auto.api.equals(quality.api), 'API: sharp\'s scale')
})
