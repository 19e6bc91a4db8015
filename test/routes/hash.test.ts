import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { test } from 'node:test'
import sharp from 'sharp'
import { OFFLOAD_BYTES } from '../../src/sources/digests.ts'
import { hammingDistance } from '../../workers/hashes/phash.ts'
import { build, leftoverTempFiles, postMedia } from '../helper.ts'
import { PICTURES, media } from '../media.ts'

const ALL = ['sha256', 'sha512', 'sha1', 'md5', 'blake2b512', 'sha3-256']

async function hash (app: Awaited<ReturnType<typeof build>>, body: Buffer, query = '') {
  const res = await postMedia(app, 'hash', body, 'application/octet-stream', query)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

test('digests equal Node crypto, for a source held in memory and one spooled to a temp file', async (t) => {
  for (const memory of ['16777216', '1000']) {
    const app = await build(t, { MEMORY_SPOOL_BYTES: memory })
    // Large non-media bytes are only counted and hashed past the sniffing window, never kept; past
    // OFFLOAD_BYTES they are hashed on the digest thread.
    for (const body of [await media('jpeg-large'), await media('mp4-h264'), Buffer.from('any bytes at all, not media'), randomBytes(6 * 2 ** 20), randomBytes(OFFLOAD_BYTES + 12_345)]) {
      const reply = await hash(app, body, `?algorithms=${ALL.join(',')}`)
      assert.equal(reply.size, body.length)
      for (const algorithm of ALL) assert.equal(reply.digests[algorithm], createHash(algorithm).update(body).digest('hex'), `${algorithm}, memory ${memory}`)
    }
    assert.deepEqual(leftoverTempFiles(app), [])
  }
})

test('default sha256 only; type sniffed; non-media gets digests and says why perceptual is missing', async (t) => {
  const app = await build(t)
  const jpeg = await hash(app, await media('jpeg'))
  assert.deepEqual(Object.keys(jpeg.digests), ['sha256'])
  assert.deepEqual(jpeg.type, { kind: 'image', format: 'jpeg', mime: 'image/jpeg' })
  assert.match(jpeg.perceptual.phash, /^[0-9a-f]{16}$/)
  const text = await hash(app, Buffer.from('hello'))
  assert.equal(text.type, null)
  assert.equal(text.perceptual, null)
  assert.match(text.perceptualSkipped, /not an image or video/)
  const broken = await media('png')
  const truncated = await hash(app, broken.subarray(0, broken.length >> 1))
  assert.equal(truncated.perceptual, null)
  assert.match(truncated.perceptualSkipped, /decoded/)
  assert.equal((await postMedia(app, 'hash', broken, 'image/png', '?algorithms=crc32')).json().code, 'THUMBD_BAD_OPTIONS')
})

test('pHash: near-duplicates within 8 bits, unrelated pictures at least 20 apart', async (t) => {
  const app = await build(t)
  const hashes: string[] = []
  for (const name of PICTURES) {
    const original = await media(name)
    const { phash } = (await hash(app, original)).perceptual
    hashes.push(phash)
    for (const copy of [await sharp(original).resize(300).webp({ quality: 60 }).toBuffer(), await sharp(original).resize(200).jpeg({ quality: 50 }).toBuffer()]) {
      const distance = hammingDistance(phash, (await hash(app, copy)).perceptual.phash)
      assert.ok(distance <= 8, `${name}: a resized re-encoded copy is ${distance} bits away`)
    }
  }
  for (let i = 0; i < hashes.length; i++) {
    for (let j = i + 1; j < hashes.length; j++) {
      const distance = hammingDistance(hashes[i]!, hashes[j]!)
      assert.ok(distance >= 20, `${PICTURES[i]} vs ${PICTURES[j]}: only ${distance} bits apart`)
    }
  }
})

test('ThumbHash placeholder decodes; a video frame hash is stable across runs', async (t) => {
  const app = await build(t)
  const { perceptual } = await hash(app, await media('png'))
  const png = Buffer.from(perceptual.thumbhashDataUrl.replace(/^data:image\/png;base64,/, ''), 'base64')
  const placeholder = await sharp(png).metadata()
  assert.equal(placeholder.format, 'png')
  assert.ok(placeholder.width! <= 32 && placeholder.height! <= 32)
  assert.ok(Buffer.from(perceptual.thumbhash, 'base64').length >= 5)

  const video = await media('mp4-h264')
  const first = await hash(app, video, '?at=1')
  const second = await hash(app, video, '?at=1')
  assert.equal(first.type.kind, 'video')
  assert.equal(first.perceptual.phash, second.perceptual.phash)
  assert.equal(first.perceptual.thumbhash, second.perceptual.thumbhash)
  const exact = await hash(app, video, '?at=0&frame=exact')
  assert.notEqual(exact.perceptual.phash, first.perceptual.phash, 'a different frame hashes differently')
})

test('over MAX_SOURCE_BYTES is 413 even for bytes that are no media', async (t) => {
  const app = await build(t, { MAX_SOURCE_BYTES: '1000' })
  const res = await postMedia(app, 'hash', Buffer.alloc(5000), 'application/octet-stream')
  assert.equal(res.statusCode, 413)
  assert.equal(res.json().code, 'THUMBD_PAYLOAD_TOO_LARGE')
  assert.deepEqual(leftoverTempFiles(app), [])
})
