// The videos people have (issue 31): deeper than 8 bits, with alpha, HDR, anamorphic pixels. Each must give
// the frame a player shows: the right size, alpha kept where the output holds it, colours of the SDR rendition.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { build, decoded, leftoverTempFiles, postMedia, thumbnailOf } from '../helper.ts'
import { DEEP, corpus, saturationAndLightness } from '../video-corpus.ts'
import { tempFolder } from '../temp-folder.ts'

const run = promisify(execFile)

test('every pixel format deeper than 8 bits (10-16 bit, 4:2:0 to 4:4:4, RGB, grey) gives the frame, its colours those of the 8-bit clip', async (t) => {
  const app = await build(t)
  const reference = await saturationAndLightness(await thumbnailOf(app, await corpus('sdr'), 'video/mp4', '?format=png', 'image/png'))
  for (const name of DEEP) {
    const res = await postMedia(app, 'thumbnail', await corpus(name), 'application/octet-stream', '?format=png')
    assert.equal(res.statusCode, 200, `${name}: ${res.body}`)
    const meta = await decoded(res.rawPayload)
    assert.deepEqual([meta.width, meta.height], [320, 180], name)
    const colour = await saturationAndLightness(res.rawPayload)
    // grey has no saturation; the others are the same picture, give or take the codec's loss.
    if (name !== 'grey10') assert.ok(Math.abs(colour.saturation - reference.saturation) < 0.06, `${name}: saturation ${colour.saturation} vs ${reference.saturation}`)
    assert.ok(Math.abs(colour.lightness - reference.lightness) < 0.05, `${name}: lightness ${colour.lightness} vs ${reference.lightness}`)
  }
  assert.deepEqual(leftoverTempFiles(app), [])
})

test('alpha (ProRes 4444, VP9 in WebM) is kept in PNG, WebP and AVIF, and flattened on the background in JPEG', async (t) => {
  const app = await build(t)
  for (const name of ['prores-4444-alpha', 'vp9-alpha'] as const) {
    const video = await corpus(name)
    for (const format of ['png', 'webp', 'avif'] as const) {
      const image = await thumbnailOf(app, video, 'application/octet-stream', `?format=${format}`, `image/${format}`)
      const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
      assert.equal((await decoded(image)).hasAlpha, true, `${name} -> ${format}`)
      const alphaAt = (x: number) => data[(90 * info.width + x) * 4 + 3]!
      assert.ok(alphaAt(40) > 240 && alphaAt(280) < 15, `${name} -> ${format}: opaque left (${alphaAt(40)}), transparent right (${alphaAt(280)})`)
    }
    const jpeg = await thumbnailOf(app, video, 'application/octet-stream', '?format=jpeg')
    const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true })
    const right = [...data.subarray((90 * info.width + 280) * 3, (90 * info.width + 280) * 3 + 3)]
    assert.ok(right.every(c => c > 240), `${name}: the transparent half is the white background in JPEG (${right})`)
    // Storyboard tiles are flattened (on the sheet's black) before they are composited.
    const board = await postMedia(app, 'storyboard', video, 'application/octet-stream', '?count=2&width=64&format=webp')
    assert.equal(board.statusCode, 200, `${name} storyboard: ${board.body}`)
    const { tileHeight } = board.json()
    const tile = await sharp(Buffer.from(board.json().sprite, 'base64')).extract({ left: 0, top: 0, width: 64, height: tileHeight }).removeAlpha().raw().toBuffer()
    const frame = await thumbnailOf(app, video, 'application/octet-stream', '?at=0&width=64&format=png', 'image/png')
    const expected = await sharp(frame).resize(64, tileHeight, { fit: 'fill' }).flatten({ background: '#000000' }).raw().toBuffer()
    const difference = tile.reduce((sum, v, i) => sum + Math.abs(v - expected[i]!), 0) / tile.length
    assert.ok(difference < 16, `${name}: the storyboard's tile is the frame on black (mean difference ${difference.toFixed(1)})`)
  }
})

test('HDR (HLG, PQ) is tone-mapped: saturation and lightness of the SDR rendition, not grey and washed out', async (t) => {
  const app = await build(t)
  const reference = await saturationAndLightness(await thumbnailOf(app, await corpus('sdr'), 'video/mp4', '?format=png', 'image/png'))
  for (const name of ['hlg', 'pq'] as const) {
    const image = await thumbnailOf(app, await corpus(name), 'application/octet-stream', '?format=png', 'image/png')
    const { saturation, lightness } = await saturationAndLightness(image)
    assert.ok(saturation > reference.saturation * 0.9 && saturation < reference.saturation * 1.1, `${name}: saturation ${saturation} vs SDR ${reference.saturation}`)
    assert.ok(Math.abs(lightness - reference.lightness) < 0.05, `${name}: lightness ${lightness} vs SDR ${reference.lightness}`)
  }
})

test("a phone's sideways HLG video comes out upright and tone-mapped, through frame=best, seek=keyframe, a percentage, hash and storyboard", async (t) => {
  const app = await build(t)
  const video = await corpus('hlg-rotated')
  const reference = await saturationAndLightness(await thumbnailOf(app, await corpus('sdr'), 'video/mp4', '?format=png', 'image/png'))
  for (const query of ['?format=png', '?format=png&frame=best', '?format=png&seek=keyframe&at=1.5', '?format=png&at=50%25']) {
    const image = await thumbnailOf(app, video, 'video/quicktime', query, 'image/png')
    const meta = await decoded(image)
    // Stored 320x180, shown 180x320 (not enlarged to the default 320 px width).
    assert.deepEqual([meta.width, meta.height], [180, 320], `${query}: portrait`)
    const { saturation } = await saturationAndLightness(image)
    assert.ok(saturation > reference.saturation * 0.9, `${query}: saturation ${saturation} vs SDR ${reference.saturation}`)
  }
  const hash = await postMedia(app, 'hash', video, 'video/quicktime')
  assert.equal(hash.statusCode, 200, hash.body)
  assert.deepEqual([hash.json().perceptual.width, hash.json().perceptual.height], [144, 256])
  const board = await postMedia(app, 'storyboard', video, 'video/quicktime', '?count=4&columns=2&width=90')
  assert.equal(board.statusCode, 200, board.body)
  assert.deepEqual([board.json().tileWidth, board.json().tileHeight], [90, 160])
  assert.deepEqual(leftoverTempFiles(app), [])
})

test('anamorphic pixels are made square: a 720x576 PAL frame of 64:45 pixels is 16:9; /api/info says so', async (t) => {
  const app = await build(t)
  const video = await corpus('anamorphic')
  const meta = await decoded(await thumbnailOf(app, video, 'video/mp4'))
  assert.deepEqual([meta.width, meta.height], [320, 180])
  const tall = await decoded(await thumbnailOf(app, video, 'video/mp4', '?height=288'))
  assert.deepEqual([tall.width, tall.height], [512, 288])
  const info = (await postMedia(app, 'info', video, 'video/mp4')).json()
  assert.deepEqual([info.width, info.height, info.sampleAspectRatio, info.bitDepth, info.hdr], [1024, 576, '64:45', 8, false])
  const hlg = (await postMedia(app, 'info', await corpus('hlg-rotated'), 'video/quicktime')).json()
  assert.deepEqual([hlg.width, hlg.height, hlg.bitDepth, hlg.colorTransfer, hlg.colorPrimaries, hlg.hdr], [180, 320, 10, 'arib-std-b67', 'bt2020', true])
})

test('a lying sample aspect ratio (100:1) is a 422, fast, nothing left behind', async (t) => {
  const app = await build(t)
  const video = await corpus('lying-sar')
  for (const query of ['', '?at=50%25']) {
    const res = await postMedia(app, 'thumbnail', video, 'video/x-matroska', query)
    assert.equal(res.statusCode, 422, `${query}: ${res.body}`)
    assert.equal(res.json().code, 'THUMBD_MEDIA_UNREADABLE')
  }
  assert.deepEqual(leftoverTempFiles(app), [])
})

test('the YUV matrix: tagged as tagged; untagged as players assume (SD BT.601, HD BT.709), at a time and at a percentage', async (t) => {
  const app = await build(t)
  const dir = tempFolder('thumbd-matrix-', t)
  const colour = [0x20, 0xc0, 0x40]
  const cases = [
    ['sd-untagged', '640x480', 'bt601', []],
    ['hd-untagged', '1280x720', 'bt709', []],
    ['hd-tagged-601', '1280x720', 'bt601', ['-colorspace', 'smpte170m']],
    ['sd-tagged-709', '640x480', 'bt709', ['-colorspace', 'bt709']]
  ] as const
  for (const [name, size, matrix, tags] of cases) {
    const path = join(dir, `${name}.mp4`)
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `color=c=0x${colour.map(c => c.toString(16)).join('')}:s=${size}:d=2:r=5`,
      '-vf', `scale=out_color_matrix=${matrix}:out_range=tv,format=yuv420p`, ...tags, '-c:v', 'libx264', '-preset', 'ultrafast', '-qp', '0', path])
    for (const query of ['?format=png', '?format=png&at=50%25']) {
      const image = await thumbnailOf(app, readFileSync(path), 'video/mp4', query, 'image/png')
      const { channels } = await sharp(image).stats()
      const mean = channels.slice(0, 3).map(c => Math.round(c.mean))
      assert.ok(mean.every((v, i) => Math.abs(v - colour[i]!) <= 6), `${name}${query}: ${mean} is the colour encoded (${colour})`)
    }
  }
})
