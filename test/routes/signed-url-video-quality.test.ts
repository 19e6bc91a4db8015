// GET vta (imgproxy Pro's video_thumbnail_animation) and vtt (video_thumbnail_tile): a WebP preview's and a
// sprite's quality follow the GET URL's image of their format, as q, fq or FORMAT_QUALITY give it, and their
// ETag changes with that default.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { startOrigin } from '../../load/range-origin.ts'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { build } from '../helper.ts'
import { media } from '../media.ts'

const KEY = Buffer.alloc(32, 3)
const SALT = Buffer.alloc(16, 5)
const sign = (path: string) => signedUrlPath(path, KEY, SALT)

/** A loopback origin serving the clip, and two instances that sign with KEY whose FORMAT_QUALITY is `low` and `high`. */
async function lowAndHigh (t: TestContext, low: string, high: string) {
  const origin = await startOrigin({ 'clip.mp4': await media('mp4-h264') })
  t.after(origin.close)
  const env = { URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: origin.url('') }
  return { clip: origin.url('clip.mp4'), low: await build(t, { ...env, FORMAT_QUALITY: low }), high: await build(t, { ...env, FORMAT_QUALITY: high }) }
}

test('vta: a WebP preview takes FORMAT_QUALITY\'s webp (was 80 whatever it said), fq and q over it; the ETag follows', async (t) => {
  const { clip, low, high } = await lowAndHigh(t, 'webp=10', 'webp=95')
  const preview = async (app: typeof low, options = '') => {
    const res = await app.inject({ url: sign(`/${options}vta:-1:100:4:320:0/plain/${clip}`) })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.headers['content-type'], 'image/webp')
    return res
  }
  const [small, large] = [await preview(low), await preview(high)]
  assert.ok(small.rawPayload.length * 2 < large.rawPayload.length, `webp=10: ${small.rawPayload.length} bytes, webp=95: ${large.rawPayload.length}`)
  assert.notEqual(small.headers.etag, large.headers.etag)
  // fq and q name the quality over FORMAT_QUALITY: the same bytes as the instance whose default it is.
  assert.ok((await preview(low, 'fq:webp:95/')).rawPayload.equals(large.rawPayload), 'fq:webp:95 as webp=95')
  assert.ok((await preview(high, 'q:10/')).rawPayload.equals(small.rawPayload), 'q:10 as webp=10')
})

test('vtt: a storyboard sprite takes FORMAT_QUALITY\'s jpeg or webp (was 80 whatever it said), fq and q over it; the ETag follows', async (t) => {
  const { clip, low, high } = await lowAndHigh(t, 'jpeg=10,webp=10', 'jpeg=95,webp=95')
  const sprite = async (app: typeof low, options = '', extension = 'jpg') => {
    const res = await app.inject({ url: sign(`/${options}vtt:0:4:2:160:0/plain/${clip}@${extension}`) })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.headers['content-type'], `image/${extension === 'jpg' ? 'jpeg' : extension}`)
    return res
  }
  for (const extension of ['jpg', 'webp']) {
    const [small, large] = [await sprite(low, '', extension), await sprite(high, '', extension)]
    assert.ok(small.rawPayload.length * 2 < large.rawPayload.length, `${extension}: q10 ${small.rawPayload.length} bytes, q95 ${large.rawPayload.length}`)
    assert.notEqual(small.headers.etag, large.headers.etag)
  }
  const [small, large] = [await sprite(low), await sprite(high)]
  assert.ok((await sprite(low, 'fq:jpg:95/')).rawPayload.equals(large.rawPayload), 'fq:jpg:95 as jpeg=95')
  assert.ok((await sprite(high, 'q:10/')).rawPayload.equals(small.rawPayload), 'q:10 as jpeg=10')
})
