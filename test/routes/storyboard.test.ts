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
