// The containers of camcorders, broadcast, discs and archives (MPEG-TS in 188- and 192-byte packets, MPEG-PS,
// Ogg Theora, ASF/WMV, FLV), and audio files, whose thumbnail is their cover art (issue 31): uploaded, by
// URL, read by ranges, and through signed GET URLs.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { sniff } from '../../contract/sniff.ts'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { decoderChildren } from '../faults/helpers.ts'
import { AUTH, build, decoded, leftoverTempFiles, postMedia } from '../helper.ts'
import { corpus, mp3WithPicture, opusWithPicture, saturationAndLightness, type CorpusName } from '../video-corpus.ts'
import { tempFolder } from '../temp-folder.ts'
import { startOrigin } from '../../load/range-origin.ts'

const CONTAINERS = [['ts', 'ts', 'mpegts'], ['m2ts', 'm2ts', 'mpegts'], ['vob', 'mpeg', 'mpeg'], ['ogv', 'ogv', 'ogg'], ['wmv', 'asf', 'asf'], ['flv', 'flv', 'flv']] as const
const AUDIO = [['mp3', 'mp3', 'mjpeg'], ['m4a', 'm4a', 'png'], ['flac', 'flac', 'png']] as const

const KEY = Buffer.from('943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881', 'hex')
const SALT = Buffer.from('520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5', 'hex')

async function fromUrl (app: FastifyInstance, route: string, url: string) {
  return app.inject({ method: 'POST', url: `/api/${route}`, headers: { ...AUTH, 'content-type': 'application/json' }, payload: { url } })
}

async function opus (): Promise<Buffer> {
  const out = join(tempFolder('thumbd-opus-'), 'cover.opus')
  await opusWithPicture(out, await corpus('cover'))
  return readFile(out)
}

test('each container is sniffed from its bytes (its demuxer forced) and gives its frame; the DVD one with square pixels', async (t) => {
  const app = await build(t)
  for (const [name, format, demuxer] of CONTAINERS) {
    const bytes = await corpus(name)
    const media = sniff(bytes.subarray(0, 4096))
    assert.deepEqual([media?.kind, media?.format, media?.kind === 'video' ? media.demuxer : undefined], ['video', format, demuxer], name)
    const res = await postMedia(app, 'thumbnail', bytes, 'application/octet-stream', '?format=png')
    assert.equal(res.statusCode, 200, `${name}: ${res.body}`)
    const meta = await decoded(res.rawPayload)
    assert.deepEqual([meta.width, meta.height], [320, 180], name)
    const info = (await postMedia(app, 'info', bytes)).json()
    assert.deepEqual([info.kind, info.format, info.width, info.height], ['video', format, name === 'vob' ? 1024 : 320, name === 'vob' ? 576 : 180], name)
  }
  assert.deepEqual(leftoverTempFiles(app), [])
})

test('by URL: containers, 10-bit HDR and audio read by ranges (or whole), storyboard and hash too; the same pictures as uploaded', { timeout: 600_000 }, async (t) => {
  const names: CorpusName[] = ['ts', 'vob', 'ogv', 'wmv', 'flv', 'hlg-rotated', 'prores-4444-alpha', 'mp3', 'flac']
  const origin = await startOrigin(Object.fromEntries(await Promise.all(names.map(async n => [n, await corpus(n)] as const))))
  t.after(origin.close)
  // Every video from this origin is read remotely by ranges, however small.
  // What is compared is the pictures, not the pace: on a busy machine the origin (in this process) and the
  // niced jobs stall for seconds, so the fetch rate floor is off and the fetch and job deadlines are long.
  const app = await build(t, { ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: origin.url(''), RANGE_READ_MIN_BYTES: '0', FETCH_MIN_BYTES_PER_SECOND: '0', FETCH_TIMEOUT_MS: '120000', JOB_TIMEOUT_MS: '120000' })
  for (const name of names) {
    const remote = await fromUrl(app, 'thumbnail', origin.url(name))
    assert.equal(remote.statusCode, 200, `${name}: ${remote.body}`)
    const whole = await postMedia(app, 'thumbnail', await corpus(name))
    assert.equal(whole.statusCode, 200, name)
    assert.ok(remote.rawPayload.equals(whole.rawPayload), `${name}: the same thumbnail as uploaded`)
  }
  assert.ok(origin.ranges().filter(r => /^bytes=\d+-\d+$/.test(r)).length >= 5, 'the videos were read by ranges')
  const board = await fromUrl(app, 'storyboard', origin.url('hlg-rotated'))
  assert.equal(board.statusCode, 200, board.body)
  const hash = await fromUrl(app, 'hash', origin.url('mp3'))
  assert.equal(hash.statusCode, 200, hash.body)
  assert.deepEqual([hash.json().type.kind, hash.json().perceptual?.width], ['audio', 256])
  assert.deepEqual(leftoverTempFiles(app), [])
})

test('audio with cover art (MP3 ID3, M4A covr, FLAC and Ogg Opus PICTURE): the picture is the thumbnail; /api/info says audio', async (t) => {
  const app = await build(t)
  const cover = await saturationAndLightness(await corpus('cover'))
  for (const [name, format, pictureCodec] of [...AUDIO, ['opus', 'ogg', 'mjpeg'] as const]) {
    const bytes = name === 'opus' ? await opus() : await corpus(name)
    assert.deepEqual([sniff(bytes)?.kind, sniff(bytes)?.format], ['audio', format], name)
    const res = await postMedia(app, 'thumbnail', bytes, 'audio/mpeg', '?width=150&format=png')
    assert.equal(res.statusCode, 200, `${name}: ${res.body}`)
    assert.deepEqual([(await decoded(res.rawPayload)).width, (await decoded(res.rawPayload)).height], [150, 150], name)
    const colour = await saturationAndLightness(res.rawPayload)
    assert.ok(Math.abs(colour.saturation - cover.saturation) < 0.05 && Math.abs(colour.lightness - cover.lightness) < 0.05, `${name}: the cover's picture`)
    const info = (await postMedia(app, 'info', bytes)).json()
    assert.equal(info.kind, 'audio', name)
    assert.equal(info.format, format, name)
    assert.ok(Math.abs(info.duration - 1) < 0.1, `${name}: ${info.duration}`)
    assert.deepEqual([info.hasPicture, info.width, info.height], [true, 300, 300], `${name} (${pictureCodec})`)
    assert.notEqual(info.codec, 'unknown')
  }
  assert.deepEqual(leftoverTempFiles(app), [])
})

test('audio without a picture is a 422 NO_PICTURE; its info says so; storyboards and resizes of audio are a 415', async (t) => {
  const app = await build(t)
  const bare = await corpus('mp3-bare')
  const res = await postMedia(app, 'thumbnail', bare)
  assert.equal(res.statusCode, 422, res.body)
  assert.equal(res.json().code, 'THUMBD_NO_PICTURE')
  const info = (await postMedia(app, 'info', bare)).json()
  assert.deepEqual([info.kind, info.codec, info.hasPicture], ['audio', 'mp3', false])
  const hash = (await postMedia(app, 'hash', bare)).json()
  assert.deepEqual([hash.type.kind, hash.perceptual], ['audio', null])
  assert.equal((await postMedia(app, 'storyboard', await corpus('mp3'))).statusCode, 415)
  assert.equal((await postMedia(app, 'resize', await corpus('mp3'))).statusCode, 415)
  assert.deepEqual(leftoverTempFiles(app), [])
})

test('an MP3 whose picture is another MP3 is a 422, one whose picture is a bomb a 413: fast, nothing left behind', async (t) => {
  const app = await build(t)
  const audio = await corpus('mp3-bare')
  const jpeg = await corpus('cover')
  // The JPEG's frame header declares 65000x65000.
  const bomb = Buffer.from(jpeg)
  const sof = bomb.indexOf(Buffer.from([0xff, 0xc0]))
  bomb.writeUInt16BE(65_000, sof + 5)
  bomb.writeUInt16BE(65_000, sof + 7)
  for (const [picture, status, code] of [[audio, 422, 'THUMBD_MEDIA_UNREADABLE'], [mp3WithPicture(audio, jpeg), 422, 'THUMBD_MEDIA_UNREADABLE'], [bomb, 413, 'THUMBD_PAYLOAD_TOO_LARGE']] as const) {
    const started = Date.now()
    const res = await postMedia(app, 'thumbnail', mp3WithPicture(audio, picture))
    assert.equal(res.statusCode, status, res.body)
    assert.equal(res.json().code, code)
    assert.ok(Date.now() - started < 5000)
  }
  // The hand-made tag itself is right: with a real picture, the picture comes out.
  assert.equal((await postMedia(app, 'thumbnail', mp3WithPicture(audio, jpeg))).statusCode, 200)
  assert.deepEqual(leftoverTempFiles(app), [])
  assert.deepEqual(decoderChildren(), [])
})

test('signed GET URLs: a container, an HDR video and an audio file\'s cover', async (t) => {
  const names: CorpusName[] = ['m2ts', 'pq', 'm4a']
  const origin = await startOrigin(Object.fromEntries(await Promise.all(names.map(async n => [n, await corpus(n)] as const))))
  t.after(origin.close)
  const app = await build(t, { URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: origin.url('') })
  for (const name of names) {
    const res = await app.inject({ url: signedUrlPath(`/rs:fit:160:0/plain/${origin.url(name)}@png`, KEY, SALT) })
    assert.equal(res.statusCode, 200, `${name}: ${res.body}`)
    assert.equal((await decoded(res.rawPayload)).width, 160, name)
  }
})
