// Dense storyboards of heavy decodes (4K 10-bit) take one decode pass of one decoder, not two lanes of
// exact seeks (issue 31: a decoder each, ~240 MB at 4K Main 10).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { passArgs } from '../../workers/video/ffmpeg-args.ts'
import { parsePams } from '../../workers/image/pam.ts'
import { takesPass } from '../../workers/video/storyboard-pass.ts'
import { colourPath } from '../../workers/video/stream-colour.ts'
import { videoInput } from '../../workers/video/video-input.ts'
import { build, postMedia } from '../helper.ts'
import { tempFolder } from '../temp-folder.ts'

const run = promisify(execFile)
const video = (width: number, height: number, pixFmt: string) => ({ duration: 10, width, height, streams: 1, stream: { width, height, pixFmt } })

/** What 60 tiles of 160 px hold in the pass: 60 frames of 328x188 RGBA. */
const SMALL = 60 * 328 * 188 * 4

test('only dense tiles of a heavy decoder, over frames denser than the tiles, within the bytes a pass may hold, take the pass', () => {
  assert.equal(takesPass(video(3840, 2160, 'yuv420p10le'), 10 / 60, 25, 200 * 1288 * 728 * 4), false, '200 tiles of 640 px would hold 750 MB of frames: seeks')
  assert.equal(takesPass(video(3840, 2160, 'yuv420p10le'), 10 / 60, 25, SMALL), true, '4K Main 10, 60 tiles of 10 s')
  assert.equal(takesPass(video(3840, 2160, 'yuv420p'), 10 / 60, 25, SMALL), false, '8-bit 4K keeps its two lanes')
  assert.equal(takesPass(video(1920, 1080, 'yuv420p10le'), 10 / 60, 25, SMALL), false, '10-bit 1080p is a light decoder')
  assert.equal(takesPass(video(3840, 2160, 'yuv420p10le'), 1, 25, SMALL), false, 'sparse tiles keep the seeks')
  assert.equal(takesPass(video(3840, 2160, 'yuv420p10le'), 10 / 60, 4, SMALL), false, 'frames sparser than tiles keep the seeks')
  assert.equal(takesPass(video(3840, 2160, 'yuv420p10le'), 10 / 60, undefined, SMALL), false, 'an unknown rate keeps the seeks')
})

test('the pass reads the guarded input once, on slice threads, taking the first frame at or after each tile', () => {
  const args = passArgs({ input: videoInput({ location: 'file', path: '/tmp/v' }), demuxer: 'mov', threads: 2, maxPixels: 1000, maxStreams: 32, coverBox: { width: 320 }, bound: { width: 328, height: 188, fit: 'crop' }, colour: colourPath({ width: 3840, height: 2160, transfer: 'arib-std-b67', primaries: 'bt2020', matrix: 'bt2020nc' }), interval: 0.25, count: 40 })
  assert.deepEqual(args.slice(args.indexOf('-threads'), args.indexOf('-threads') + 4), ['-threads', '2', '-thread_type', 'slice'])
  assert.ok(!args.includes('-ss'), 'no seek: one decode from the start')
  assert.deepEqual(args.slice(args.indexOf('-i') - 6, args.indexOf('-i') + 2), ['-enable_drefs', '0', '-use_absolute_path', '0', '-f', 'mov', '-i', 'file:/tmp/v'])
  assert.match(args[args.indexOf('-vf') + 1]!, /^select='gte\(t,selected_n\*0\.25\)',scale=.*tonemap.*format=pix_fmts=rgba\|rgb24$/)
  assert.equal(args[args.indexOf('-frames:v') + 1], '40')
  assert.deepEqual(args.slice(-5), ['-f', 'image2pipe', '-c:v', 'pam', 'pipe:1'])
})

test('a turned video (a phone held upright) is turned after the shrink, not by ffmpeg at full size', () => {
  const request = { input: videoInput({ location: 'file', path: '/tmp/v' }), demuxer: 'mov', threads: 2, maxPixels: 1000, maxStreams: 32, coverBox: { width: 320 }, bound: { width: 188, height: 328, fit: 'crop' }, colour: colourPath({ width: 3840, height: 2160, transfer: 'arib-std-b67', primaries: 'bt2020', matrix: 'bt2020nc' }), interval: 0.25, count: 40 } as const
  const args = passArgs({ ...request, turned: 270 })
  assert.equal(args[args.indexOf('-protocol_whitelist') - 1], '-noautorotate', 'an input option: ffmpeg inserts no turn of its own')
  // The shrink covers 320 px of the stored height (the width as shown), the bound is taken as stored, the
  // tone-map and 8 bits as stored; the turn last, on the small 8-bit frame.
  const chain = args[args.indexOf('-vf') + 1]!
  assert.match(chain, /^select='[^']*',scale=w='max\(1,trunc\(iw\*min\(1,clip\(sar,0\.25,4\)\)\*min\(1,320\/\(ih\/max/)
  assert.match(chain, /:flags=area,setsar=1,crop=w='min\(iw,328\)':h='min\(ih,188\)':exact=1,format=pix_fmts=yuv444p16le\|gbrp16le,zscale=/)
  assert.match(chain, /,format=pix_fmts=rgba\|rgb24,transpose=cclock$/)
  assert.ok(!passArgs(request).includes('-noautorotate'), 'an unturned video: the chain as before')
})

test('PAMs one after another are parsed frame by frame', () => {
  const pam = (w: number, h: number, v: number) => Buffer.concat([Buffer.from(`P7\nWIDTH ${w}\nHEIGHT ${h}\nDEPTH 3\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\n`), Buffer.alloc(w * h * 3, v)])
  const frames = parsePams(Buffer.concat([pam(2, 1, 7), pam(1, 3, 9)]))
  assert.deepEqual(frames.map(f => [f.width, f.height, f.data[0]]), [[2, 1, 7], [1, 3, 9]])
  assert.throws(() => parsePams(Buffer.concat([pam(2, 1, 7), pam(1, 3, 9).subarray(0, 60)])), { code: 'MEDIA_UNREADABLE' })
})

test('a dense storyboard of 4K Main 10 video: every tile, in order, each a different frame', async (t) => {
  const app = await build(t)
  const path = join(tempFolder('thumbd-deep4k-', t), 'deep.mp4')
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=3840x2160:rate=10:duration=1', '-pix_fmt', 'yuv420p10le', '-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'log-level=error', '-tag:v', 'hvc1', path])
  const res = await postMedia(app, 'storyboard', readFileSync(path), 'video/mp4', '?count=8&columns=8&width=96')
  assert.equal(res.statusCode, 200, res.body)
  const board = res.json()
  assert.equal(board.tiles?.length ?? board.vtt.match(/-->/g).length, 8)
  const { data, info } = await sharp(Buffer.from(board.sprite, 'base64')).raw().toBuffer({ resolveWithObject: true })
  const tile = (i: number) => {
    const rows = Array.from({ length: board.tileHeight }, (_, y) => data.subarray(((y * info.width) + i * board.tileWidth) * info.channels, ((y * info.width) + (i + 1) * board.tileWidth) * info.channels))
    return Buffer.concat(rows)
  }
  // testsrc2 moves every frame: tiles 0.125 s apart over 10 fps are 8 frames of the 10, none repeated.
  for (let i = 1; i < 8; i++) {
    const [a, b] = [tile(i - 1), tile(i)]
    const diff = a.reduce((sum, v, k) => sum + Math.abs(v - b[k]!), 0) / a.length
    assert.ok(diff > 1, `tile ${i} differs from tile ${i - 1} (mean difference ${diff.toFixed(2)})`)
  }
})

test('a dense storyboard of turned 4K Main 10 video: tiles as the video is shown', async (t) => {
  const app = await build(t)
  const dir = tempFolder('thumbd-deep4k-turned-', t)
  // Stored landscape with a white top-left quarter; the display matrix turns it a quarter to the left, as a
  // phone held upright records: shown 2160x3840, the white quarter at the bottom left.
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=black:size=3840x2160:rate=10:duration=1,drawbox=x=0:y=0:w=1920:h=1080:color=white:t=fill', '-pix_fmt', 'yuv420p10le', '-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'log-level=error', '-tag:v', 'hvc1', join(dir, 'stored.mp4')])
  await run('ffmpeg', ['-v', 'error', '-y', '-i', join(dir, 'stored.mp4'), '-c', 'copy', '-metadata:s:v:0', 'rotate=90', join(dir, 'turned.mp4')])
  const res = await postMedia(app, 'storyboard', readFileSync(join(dir, 'turned.mp4')), 'video/mp4', '?count=4&columns=4&width=54')
  assert.equal(res.statusCode, 200, res.body)
  const board = res.json()
  assert.deepEqual([board.tileWidth, board.tileHeight], [54, 96])
  const { data, info } = await sharp(Buffer.from(board.sprite, 'base64')).greyscale().raw().toBuffer({ resolveWithObject: true })
  const at = (x: number, y: number) => data[y * info.width + x]!
  for (let i = 0; i < 4; i++) {
    const left = i * board.tileWidth
    assert.deepEqual([at(left + 13, 72), at(left + 40, 72), at(left + 13, 24), at(left + 40, 24)].map(v => v > 128), [true, false, false, false], `tile ${i}: white at the bottom left only`)
  }
})
