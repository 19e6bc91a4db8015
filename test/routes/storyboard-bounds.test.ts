// Grabs sized from the probe stay bounded whatever the stream does after it: a video that probes 4096x16
// and then sends 1280x16384 frames (63 MB of RGB each) must not pipe those frames whole, once per tile.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { promisify } from 'node:util'
import { build, leftoverTempFiles, postMedia } from '../helper.ts'
import { tempFolder } from '../temp-folder.ts'

const run = promisify(execFile)
const dir = tempFolder('thumbd-storyboard-bounds-', { after })

/** 1 s of 4096x16 frames, then 4 s of 1280x16384 ones: joined as MPEG-TS, remuxed to MP4 (the probe sees the first size). */
async function tallSwitch (): Promise<Buffer> {
  const part = async (name: string, size: string, seconds: number) => {
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `color=gray:size=${size}:rate=2:duration=${seconds}`, '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '1', '-pix_fmt', 'yuv420p', '-f', 'mpegts', join(dir, name)])
    return readFileSync(join(dir, name))
  }
  writeFileSync(join(dir, 'joined.ts'), Buffer.concat([await part('wide.ts', '4096x16', 1), await part('tall.ts', '1280x16384', 4)]))
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'mpegts', '-i', join(dir, 'joined.ts'), '-c', 'copy', join(dir, 'switch.mp4')])
  return readFileSync(join(dir, 'switch.mp4'))
}

/** The highest RSS of this process (the pool's threads are in it) while `work` runs, above where it started. */
async function rssGrowth<T> (work: () => Promise<T>): Promise<{ result: T, grownMB: number }> {
  const start = process.memoryUsage().rss
  let peak = start
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 5)
  try {
    const result = await work()
    return { result, grownMB: (Math.max(peak, process.memoryUsage().rss) - start) / 2 ** 20 }
  } finally {
    clearInterval(timer)
  }
}

test('a video that switches to tall frames after its probe: every storyboard and preview grab stays near its tile\'s size', { timeout: 600_000 }, async (t) => {
  // What is asserted is memory, not time: a job deadline of 2 min and a test's of 10 (the preview's 20 grabs of
  // 1280x16384 frames ran past the default 30 s, a 504, beside stress-ng).
  const app = await build(t, { JOB_TIMEOUT_MS: '120000' })
  const video = await tallSwitch()
  // Warm the pool (threads, sharp) so that what grows is the requests' own.
  const warm = await postMedia(app, 'storyboard', video, 'video/mp4', '?count=1&width=64&columns=1')
  assert.equal(warm.statusCode, 200, warm.body)
  // 640x2 tiles from the probe; 16 of the 20 grabs land on 1280x16384 frames. Before: each was piped whole
  // (63 MB of RGB) and cut to 640x2 by sharp, ~1 GB over the request, the server's RSS up by hundreds of MB.
  for (const [route, query] of [['storyboard', '?count=20&width=640&columns=1'], ['preview', '?frames=20&width=640']] as const) {
    const { result: res, grownMB } = await rssGrowth(() => postMedia(app, route, video, 'video/mp4', query))
    t.diagnostic(`${route}${query}: ${res.statusCode}, RSS +${grownMB.toFixed(0)} MB`)
    assert.equal(res.statusCode, 200, `${route}${query}: ${res.body}`)
    assert.ok(grownMB < 100, `${route}${query}: the server's RSS grew ${grownMB.toFixed(0)} MB`)
  }
  const board = (await postMedia(app, 'storyboard', video, 'video/mp4', '?count=20&width=640&columns=1')).json()
  assert.deepEqual([board.tileWidth, board.tileHeight, board.width, board.height], [640, 2, 640, 40], 'the layout is the probe\'s')
  assert.deepEqual(leftoverTempFiles(app), [])
})
