// Bad video input of issue 31: a 16-bit frame at the pixel limit and past it, a stream that switches size and
// pixel format mid-stream, sample aspect ratios that lie, colour tags that contradict each other, an MPEG-TS
// of 900 PIDs. Each a catalogue 4xx or a right picture, within the job's limits, nothing left behind.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { decoderChildren, waitFor } from '../faults/helpers.ts'
import { slowdown } from '../busy-machine.ts'
import { build, decoded, leftoverTempFiles, postMedia } from '../helper.ts'
import { tempFolder } from '../temp-folder.ts'

const run = promisify(execFile)
const ffmpeg = (args: string[]) => run('ffmpeg', ['-hide_banner', '-loglevel', 'fatal', '-y', ...args], { timeout: 60_000, maxBuffer: 1 << 20 })
const x264 = ['-c:v', 'libx264', '-preset', 'ultrafast']

async function nothingLeft (app: Awaited<ReturnType<typeof build>>) {
  assert.deepEqual(leftoverTempFiles(app), [])
  await waitFor(() => decoderChildren().length === 0, 5000, 'no decoder left')
}

test('a 16-bit RGB frame at the pixel limit gives its picture; past it (the decoder\'s padding included) a 413', async (t) => {
  const dir = tempFolder('thumbd-16bit-', t)
  const app = await build(t, { MAX_INPUT_PIXELS: String(1000 * 1000) })
  // 1024x960 is the largest 16:15 frame whose decoder buffer fits 1 MP; ffv1 pads 1000 px rows to 1024.
  for (const [size, status] of [['1024x960', 200], ['1000x1000', 413], ['1000x1001', 413]] as const) {
    const path = join(dir, `${size}.mkv`)
    await ffmpeg(['-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=5:duration=1`, '-c:v', 'ffv1', '-pix_fmt', 'rgb48le', path])
    for (const query of ['', '?at=50%25']) {
      const res = await postMedia(app, 'thumbnail', await readFile(path), 'video/x-matroska', query)
      assert.equal(res.statusCode, status, `${size}${query}: ${res.body}`)
      if (status === 200) assert.deepEqual([(await decoded(res.rawPayload)).width, (await decoded(res.rawPayload)).height], [320, 300])
      else assert.equal(res.json().code, 'THUMBD_PAYLOAD_TOO_LARGE')
    }
  }
  await nothingLeft(app)
})

test('a stream that switches size and pixel format mid-stream (8-bit 320x180, then 10-bit 640x480): each part gives its frame', async (t) => {
  const dir = tempFolder('thumbd-switch-', t)
  const parts = [['320x180', 'yuv420p'], ['640x480', 'yuv420p10le']] as const
  for (const [i, [size, pixFmt]] of parts.entries()) {
    // The second part's clock goes on where the first's ends.
    await ffmpeg(['-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=5:duration=2`, ...x264, '-pix_fmt', pixFmt, '-g', '5', '-output_ts_offset', String(i * 2), '-f', 'mpegts', join(dir, `${i}.ts`)])
  }
  // MPEG-TS may be cut and joined: one stream whose frames change in the middle.
  const joined = Buffer.concat(await Promise.all(parts.map((_, i) => readFile(join(dir, `${i}.ts`)))))
  const app = await build(t)
  for (const [at, size] of [['0.5', [320, 180]], ['3', [320, 240]]] as const) {
    const res = await postMedia(app, 'thumbnail', joined, 'video/mp2t', `?at=${at}`)
    assert.equal(res.statusCode, 200, `at ${at}: ${res.body}`)
    assert.deepEqual([(await decoded(res.rawPayload)).width, (await decoded(res.rawPayload)).height], size, `at ${at}`)
  }
  const board = await postMedia(app, 'storyboard', joined, 'video/mp2t', '?count=8&width=64')
  assert.ok(board.statusCode === 200 || board.statusCode === 422, board.body)
  await nothingLeft(app)
})

test('sample aspect ratios that lie: 0:1 (unknown) is square, ~143:1 is a 422 on every route', async (t) => {
  const dir = tempFolder('thumbd-sar-', t)
  const app = await build(t)
  const unknown = join(dir, 'unknown.mkv')
  await ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=5:duration=1', '-vf', 'setsar=0/1', ...x264, unknown])
  const square = await postMedia(app, 'thumbnail', await readFile(unknown), 'video/x-matroska')
  assert.equal(square.statusCode, 200, square.body)
  assert.deepEqual([(await decoded(square.rawPayload)).width, (await decoded(square.rawPayload)).height], [320, 180])
  const liar = join(dir, 'liar.mkv')
  // The codec caps what it writes (100:1 for H.264); the container's own field says 1000:1.
  await ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=5:duration=1', ...x264, '-aspect', '1777.78', liar])
  for (const [route, query] of [['thumbnail', ''], ['thumbnail', '?at=50%25'], ['info', ''], ['storyboard', '?count=2']] as const) {
    const res = await postMedia(app, route, await readFile(liar), 'video/x-matroska', query)
    assert.equal(res.statusCode, 422, `${route}${query}: ${res.body}`)
    assert.match(res.json().message, /sample aspect ratio/)
  }
  await nothingLeft(app)
})

test('colour tags that contradict each other (PQ transfer, BT.709 primaries, BT.601 matrix on 8-bit video) give a picture', async (t) => {
  const dir = tempFolder('thumbd-tags-', t)
  const path = join(dir, 'odd.mp4')
  await ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=5:duration=1', ...x264, '-pix_fmt', 'yuv420p', '-color_trc', 'smpte2084', '-color_primaries', 'bt709', '-colorspace', 'bt470bg', path])
  const app = await build(t)
  for (const query of ['', '?at=50%25', '?frame=best']) {
    const res = await postMedia(app, 'thumbnail', await readFile(path), 'video/mp4', query)
    assert.equal(res.statusCode, 200, `${query}: ${res.body}`)
    assert.deepEqual([(await decoded(res.rawPayload)).width, (await decoded(res.rawPayload)).height], [320, 180])
  }
  const info = (await postMedia(app, 'info', await readFile(path), 'video/mp4')).json()
  assert.deepEqual([info.colorTransfer, info.colorPrimaries, info.colorSpace, info.hdr], ['smpte2084', 'bt709', 'bt470bg', true])
  await nothingLeft(app)
})

test('an MPEG-TS of 900 PIDs is a 422 on every route, within seconds, nothing left behind', { timeout: 600_000 }, async (t) => {
  const dir = tempFolder('thumbd-pids-', t)
  await ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=64x36:rate=5:duration=0.2', ...x264, join(dir, 'one.mp4')])
  await ffmpeg(['-i', join(dir, 'one.mp4'), ...Array.from({ length: 900 }, () => ['-map', '0:v']).flat(), '-c', 'copy', '-f', 'mpegts', join(dir, 'pids.ts')])
  const bytes = await readFile(join(dir, 'pids.ts'))
  // A job deadline past the budget, so that a busy machine's slow refusal is judged by the budget, not cut at the
  // default 30 s (a 504 on ?at=50% in a stressed full run).
  const app = await build(t, { JOB_TIMEOUT_MS: '120000' })
  // 10 s, times how much slower than quiet a busy machine is now (test/busy-machine.ts).
  const budgetMs = Math.round(10_000 * await slowdown(app))
  for (const [route, query] of [['thumbnail', ''], ['thumbnail', '?at=50%25'], ['info', ''], ['storyboard', '?count=2']] as const) {
    const started = Date.now()
    const res = await postMedia(app, route, bytes, 'video/mp2t', query)
    assert.equal(res.statusCode, 422, `${route}${query}: ${res.body}`)
    assert.equal(res.json().code, 'THUMBD_MEDIA_UNREADABLE')
    assert.ok(Date.now() - started < budgetMs, `${route}${query}: ${Date.now() - started} ms (budget ${budgetMs} ms)`)
  }
  await nothingLeft(app)
})
