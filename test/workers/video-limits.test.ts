// Video limits that a file's content must not be able to walk around: the duration limit whatever metadata
// comes before ffmpeg's report of it, and the memory of frame=best whatever the frame size.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { promisify } from 'node:util'
import { TOOL_MARKER } from '../../workers/tools/index.ts'
import { toolCpuSeconds } from '../../src/jobs/settings.ts'
import { build, postMedia } from '../helper.ts'
import { tempFolder } from '../temp-folder.ts'

const run = promisify(execFile)
const dir = tempFolder('thumbd-video-limits-', { after })

async function clip (name: string, size: string, seconds: number, extra: string[] = []): Promise<Buffer> {
  const path = join(dir, name)
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=25:duration=${seconds}`, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', ...extra, path])
  return readFileSync(path)
}

/** Peak RSS (VmHWM) of this process's decoders, found by the marker every tool carries, sampled until stopped. */
function samplePeakRss () {
  let peakKb = 0
  const timer = setInterval(() => {
    for (const pid of readdirSync('/proc').filter(p => /^\d+$/.test(p))) {
      try {
        if (!readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`${TOOL_MARKER}=${process.pid}`)) continue
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
        if (hwm !== null) peakKb = Math.max(peakKb, Number(hwm[1]))
      } catch {} // gone meanwhile, or not ours to read
    }
  }, 5)
  return { stop: () => { clearInterval(timer); return peakKb * 1024 } }
}

test('the duration limit holds however much metadata a file carries before ffmpeg reports its duration', async (t) => {
  const app = await build(t, { MAX_VIDEO_SECONDS: '1' })
  const plain = await clip('plain.mkv', '320x240', 2)
  // 100 tags of 250 bytes (Matroska keeps them whole; MP4 cuts a comment to 256): ffmpeg prints 27 KB of them
  // before "Duration:".
  const tags = Array.from({ length: 100 }, (_, i) => ['-metadata', `key${i}=${'x'.repeat(250)}`]).flat()
  const padded = await clip('padded.mkv', '320x240', 2, tags)
  for (const [name, body] of [['plain', plain], ['padded', padded]] as const) {
    const res = await postMedia(app, 'thumbnail', body, 'video/x-matroska', '?at=0.5')
    assert.equal(res.statusCode, 413, `${name}: ${res.body}`)
    assert.equal(res.json().code, 'THUMBD_PAYLOAD_TOO_LARGE')
  }
})

test('frame=best compares shrunk frames: a 1920x1920 video stays far below the ~600 MB its full frames took', async (t) => {
  const app = await build(t)
  const square = await clip('square.mp4', '1920x1920', 3)
  for (const [route, query] of [['thumbnail', '?frame=best&at=0'], ['thumbnail', '?frame=best&at=0&width=1600'], ['hash', '?frame=best&at=0']] as const) {
    const sampler = samplePeakRss()
    const res = await postMedia(app, route, square, 'video/mp4', query)
    const peak = sampler.stop()
    t.diagnostic(`${route}${query}: decoder peak ${Math.round(peak / 2 ** 20)} MB`)
    assert.equal(res.statusCode, 200, `${route}${query}: ${res.body}`)
    assert.ok(peak > 0, 'the decoder was sampled')
    assert.ok(peak < 250 * 2 ** 20, `${route}${query}: the decoder peaked at ${Math.round(peak / 2 ** 20)} MB`)
  }
})

test("a tool's CPU-time limit grows with its decoder threads, so a many-threaded run outlives the deadline's kill", () => {
  for (const threads of [1, 2, 16, 64]) {
    // All its threads busy for the whole job time must stay under the limit.
    assert.ok(toolCpuSeconds(30_000, threads) > 30 * (threads + 1), `${threads} threads`)
  }
})
