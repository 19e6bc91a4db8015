import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { listPeerPhotos } from '../../load/peer-photos.ts'
import { peerTable, type PeerRow } from '../../load/peer.ts'
import { makeHeic } from '../heic-media.ts'

const run = promisify(execFile)
const ffmpeg = (...args: string[]) => run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', ...args])

test('the peer bench takes every still photo format thumbd serves, named by its bytes, and says what it leaves out', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'thumbd-peer-photos-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const side = join(dir, 'side')
  await mkdir(side)
  await ffmpeg('-i', 'testsrc2=size=640x480', '-frames:v', '1', '-q:v', '3', join(dir, 'a.jpg'))
  await copyFile(join(dir, 'a.jpg'), join(dir, 'b.JPEG'))
  await ffmpeg('-i', 'testsrc2=size=640x480', '-frames:v', '1', join(dir, 'c.png'))
  await sharp(join(dir, 'c.png')).webp().toFile(join(dir, 'd.webp'))
  await sharp(join(dir, 'c.png')).avif().toFile(join(dir, 'e.avif'))
  await copyFile(join(dir, 'c.png'), join(dir, 'f.jpg')) // a PNG under a JPEG's name: a PNG
  await makeHeic(side, 'g', '640x480')
  await copyFile(join(side, 'g.heic'), join(dir, 'g.heic'))
  await ffmpeg('-i', 'testsrc2=size=320x240', '-frames:v', '1', join(dir, 'h.gif'))
  await ffmpeg('-i', 'testsrc2=size=320x240:rate=5', '-frames:v', '5', join(dir, 'i-animated.gif'))
  await writeFile(join(dir, 'j.png'), 'not a picture')
  await writeFile(join(dir, 'notes.txt'), 'the set')

  const { photos, skipped } = await listPeerPhotos(dir)
  assert.deepEqual(photos.map(p => [p.name, p.format, p.mime, p.width, p.height]), [
    ['a.jpg', 'jpeg', 'image/jpeg', 640, 480],
    ['b.JPEG', 'jpeg', 'image/jpeg', 640, 480],
    ['c.png', 'png', 'image/png', 640, 480],
    ['d.webp', 'webp', 'image/webp', 640, 480],
    ['e.avif', 'avif', 'image/avif', 640, 480],
    ['f.jpg', 'png', 'image/png', 640, 480],
    ['g.heic', 'heic', 'image/heic', 640, 480],
    ['h.gif', 'gif', 'image/gif', 320, 240]
  ])
  assert.deepEqual(skipped.map(s => s.name), ['i-animated.gif', 'j.png', 'notes.txt'])
  assert.match(skipped[0]!.why, /animated gif \(5 frames\): npm run bench:animation/)
  assert.match(skipped[1]!.why, /no format thumbd serves/)
})

test('the peer table names each photo\'s format and sums the ratios up per input and output format', () => {
  const figures = { okPerSecond: 10, cpuMsPerOk: 20 }
  const row = (photo: string, input: string, format: string, ratio: number): PeerRow =>
    ({ photo, input, megapixels: 4, format, thumbdUrl: figures, thumbdUpload: figures, imgproxy: figures, ratio, cpuRatio: 1 / ratio })
  const lines = peerTable([row('a.jpg', 'jpeg', 'jpeg', 1.5), row('b.jpg', 'jpeg', 'jpeg', 1.2), row('c.png', 'png', 'webp', 0.9)])
  assert.ok(lines.includes('| a.jpg | jpeg | 4.0 | jpeg | 10.0 / 20 | 10.0 / 20 | 10.0 / 20 | **1.50** | **0.67** |'))
  assert.ok(lines.includes('| jpeg → jpeg | 2 | 1.20-1.50 | 0.67-0.83 |'))
  assert.ok(lines.includes('| png → webp | 1 | 0.90 | 1.11 |'))
})
