// Storyboards checked without a player: every WebVTT cue's times and rectangle against the sprite's size.
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

/** The cues of a WebVTT: start and end in seconds, and the #xywh rectangle. */
function cues (vtt: string) {
  assert.ok(vtt.startsWith('WEBVTT\n\n'))
  const seconds = (stamp: string) => { const [h, m, s] = stamp.split(':').map(Number); return h! * 3600 + m! * 60 + s! }
  return [...vtt.matchAll(/^(\d\d:\d\d:\d\d\.\d{3}) --> (\d\d:\d\d:\d\d\.\d{3})\n(\S+)#xywh=(\d+),(\d+),(\d+),(\d+)$/gm)]
    .map(m => ({ start: seconds(m[1]!), end: seconds(m[2]!), sprite: m[3]!, x: Number(m[4]), y: Number(m[5]), w: Number(m[6]), h: Number(m[7]) }))
}

test('a storyboard: the sprite holds every tile, the cues cover the video in order and point inside it', async (t) => {
  const app = await build(t)
  const dir = tempFolder('thumbd-storyboard-', t)
  const path = join(dir, 'clip.mp4')
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=25:duration=20', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p', path])
  for (const [query, tiles] of [['?count=10&columns=4&width=80', 10], ['?interval=2.5&columns=3&width=64&format=webp&sprite=https://cdn.example/s.webp', 8]] as const) {
    const res = await postMedia(app, 'storyboard', readFileSync(path), 'video/mp4', query)
    assert.equal(res.statusCode, 200, res.body)
    const board = res.json()
    const sprite = Buffer.from(board.sprite, 'base64')
    const meta = await sharp(sprite).metadata()
    assert.equal(meta.format, board.mime.slice('image/'.length))
    assert.deepEqual([meta.width, meta.height], [board.width, board.height])
    assert.equal(board.tileHeight, Math.round(board.tileWidth * 180 / 320 / 2) * 2, 'tiles keep the video\'s aspect')
    const list = cues(board.vtt)
    assert.equal(list.length, tiles, query)
    assert.equal(list[0]!.start, 0)
    assert.ok(Math.abs(list.at(-1)!.end - 20) < 0.1, 'the last cue ends with the video')
    for (const [i, cue] of list.entries()) {
      if (i > 0) assert.equal(cue.start, list[i - 1]!.end, 'cues follow each other without gap or overlap')
      assert.ok(cue.end > cue.start)
      assert.deepEqual([cue.w, cue.h], [board.tileWidth, board.tileHeight])
      assert.ok(cue.x + cue.w <= meta.width! && cue.y + cue.h <= meta.height!, `cue ${i} inside the sprite`)
      assert.deepEqual([cue.x, cue.y], [(i % board.columns) * cue.w, Math.floor(i / board.columns) * cue.h], `cue ${i} on the grid`)
    }
    if (query.includes('sprite=')) assert.ok(list.every(cue => cue.sprite === 'https://cdn.example/s.webp'))
    // The tiles are different moments of the video, not one frame repeated.
    const tile = (i: number) => sharp(sprite).extract({ left: list[i]!.x, top: list[i]!.y, width: list[i]!.w, height: list[i]!.h }).raw().toBuffer()
    assert.ok(!(await tile(0)).equals(await tile(list.length - 1)))
  }
})

test('storyboard refusals: an image, both interval and count, too many tiles', async (t) => {
  const app = await build(t)
  assert.equal((await postMedia(app, 'storyboard', await media('jpeg'), 'image/jpeg')).statusCode, 415)
  const clip = await media('mp4-h264')
  assert.equal((await postMedia(app, 'storyboard', clip, 'video/mp4', '?interval=1&count=3')).statusCode, 400)
  assert.equal((await postMedia(app, 'storyboard', clip, 'video/mp4', '?count=500')).statusCode, 400)
})

test('a storyboard\'s sprite is sized from the probe and refused before any frame is grabbed: tall tiles, too many pixels (413), too wide a row (400)', async (t) => {
  const app = await build(t)
  const dir = tempFolder('thumbd-storyboard-', t)
  const video = async (name: string, size: string) => {
    const path = join(dir, name)
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=25:duration=2`, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', path])
    return readFileSync(path)
  }
  const tall = await video('tall.mp4', '16x2048')
  const portrait = await video('portrait.mp4', '180x320')
  const refusals = [
    // 640x81920 tiles: before, each was decoded and enlarged to that, then the sheet failed after ~4 s (RSS +600 MB).
    [tall, '?count=4&columns=1&width=640', 413],
    // 20 columns of 320x568 tiles, 10 rows: 6400x5680, 36 MP.
    [portrait, '?count=200&columns=20&width=320', 413],
    // 32000 px wide, known from the options alone.
    [portrait, '?count=50&columns=50&width=640', 400]
  ] as const
  for (const [body, query, status] of refusals) {
    const started = Date.now()
    const res = await postMedia(app, 'storyboard', body, 'video/mp4', query)
    assert.equal(res.statusCode, status, `${query}: ${res.body}`)
    assert.equal(res.json().code, status === 413 ? 'THUMBD_PAYLOAD_TOO_LARGE' : 'THUMBD_BAD_OPTIONS')
    assert.ok(Date.now() - started < 3000, `${query}: refused up front, not after its tiles (${Date.now() - started} ms)`)
  }
  // Within the bounds the tall video still makes its storyboard; a rotated one gets tiles as it is shown.
  const narrow = await postMedia(app, 'storyboard', tall, 'video/mp4', '?count=2&columns=2&width=16')
  assert.equal(narrow.statusCode, 200, narrow.body)
  assert.deepEqual([narrow.json().tileHeight, narrow.json().width, narrow.json().height], [2048, 32, 2048])
  await video('plain.mp4', '320x180')
  // A phone's portrait video: stored landscape, turned by the container's display matrix.
  await run('ffmpeg', ['-v', 'error', '-y', '-i', join(dir, 'plain.mp4'), '-c', 'copy', '-metadata:s:v:0', 'rotate=90', join(dir, 'turned.mp4')])
  const turned = readFileSync(join(dir, 'turned.mp4'))
  const board = await postMedia(app, 'storyboard', turned, 'video/mp4', '?count=2&columns=2&width=90')
  assert.equal(board.statusCode, 200, board.body)
  assert.equal(board.json().tileHeight, 160, 'a 320x180 video turned a quarter: 90x160 tiles')
  assert.deepEqual((await sharp(Buffer.from(board.json().sprite, 'base64')).metadata()).height, 160)
})
