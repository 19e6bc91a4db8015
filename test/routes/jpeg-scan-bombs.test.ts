// Progressive scan bombs through the real app and pool: more than MAX_JPEG_SCANS scans is a 413 before any decoder
// runs (before, libturbojpeg decoded 500 scans, gave up, and sharp decoded them all again), whichever way the JPEG
// arrives (memory or temp file), whichever decoder is set, and for /api/hash's decode too (its perceptual hash skipped, saying why); 32 scans still decode.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MAX_JPEG_SCANS } from '../../contract/limits.ts'
import { haveJpegtran, plainGrey, scanBomb } from '../workers/scan-bombs.ts'
import { build, leftoverTempFiles, postMedia } from '../helper.ts'

test('a JPEG of more scans than MAX_JPEG_SCANS is refused with 413 at once; one of MAX_JPEG_SCANS is a thumbnail', { skip: !haveJpegtran && 'no jpegtran' }, async (t) => {
  const plain = await plainGrey(2000)
  const [allowed, over, bomb] = [scanBomb(plain, MAX_JPEG_SCANS), scanBomb(plain, MAX_JPEG_SCANS + 1), scanBomb(plain, 595)]
  for (const env of [{}, { JPEG_DECODER: 'sharp' }, { JPEG_DECODER: 'sandbox' }, { MEMORY_SPOOL_BYTES: '0' }] as Array<Record<string, string>>) {
    const app = await build(t, env)
    const label = JSON.stringify(env)
    assert.equal((await postMedia(app, 'thumbnail', allowed, 'image/jpeg', '?width=100')).statusCode, 200, label)
    for (const [route, body] of [['thumbnail', over], ['thumbnail', bomb], ['resize', bomb], ['hash', bomb]] as const) {
      const start = performance.now()
      const res = await postMedia(app, route, body, 'image/jpeg', route === 'hash' ? '' : '?width=100')
      // /api/hash answers its digests, and says why the perceptual hash is missing.
      if (route === 'hash') assert.match(res.json().perceptualSkipped, /more than 32 scans/, `${label}: ${res.body}`)
      else assert.equal(res.json().code, 'THUMBD_PAYLOAD_TOO_LARGE', `${label} ${route}: ${res.body}`)
      // 595 scans of 2000x2000 took ~2 s of CPU through libturbojpeg and sharp; refused from a walk of its bytes.
      assert.ok(performance.now() - start < 1000, `${label} ${route}: ${performance.now() - start} ms`)
    }
    assert.deepEqual(leftoverTempFiles(app), [])
  }
})
