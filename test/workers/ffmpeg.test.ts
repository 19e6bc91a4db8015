import assert from 'node:assert/strict'
import { test } from 'node:test'
import { frameArgs, probeArgs } from '../../workers/ffmpeg-args.ts'
import { parsePpm } from '../../workers/ppm.ts'
import { seekPoint } from '../../workers/video.ts'
import { negotiate } from '../../src/routes/options.ts'

/** The guard every input carries: local files only, demuxer forced, then the input. */
function assertGuardedInput (args: string[], demuxer: string, path: string) {
  const input = args.indexOf('-i')
  assert.equal(args[input + 1], `file:${path}`)
  assert.deepEqual(args.slice(input - 2, input), ['-f', demuxer])
  const whitelist = args.indexOf('-protocol_whitelist')
  assert.ok(whitelist >= 0 && whitelist < input && args[whitelist + 1] === 'file')
  if (demuxer === 'mov') assert.deepEqual(args.slice(input - 6, input - 2), ['-enable_drefs', '0', '-use_absolute_path', '0'])
  assert.equal(args.filter(a => a === '-i').length, 1)
}

test('probe and frame command lines read only the local file through the forced demuxer', () => {
  assertGuardedInput(probeArgs('/tmp/x', 'mov'), 'mov', '/tmp/x')
  const frame = frameArgs({ path: '/tmp/y', demuxer: 'matroska', seekSeconds: 12.5, bestOf: 0, threads: 1 })
  assertGuardedInput(frame, 'matroska', '/tmp/y')
  assert.ok(frame.indexOf('-ss') < frame.indexOf('-i'), 'seek before the input (fast seek)')
  assert.equal(frame[frame.indexOf('-ss') + 1], '12.500')
  assert.ok(frame.includes('-nostdin'))
  assert.deepEqual(frame.slice(-5), ['-f', 'image2pipe', '-c:v', 'ppm', 'pipe:1'])
  assert.ok(!frame.includes('-vf'))
  const best = frameArgs({ path: '/tmp/y', demuxer: 'avi', seekSeconds: 0, bestOf: 50, threads: 2 })
  assert.equal(best[best.indexOf('-vf') + 1], 'thumbnail=n=50')
})

test('seek points stay inside the video', () => {
  assert.equal(seekPoint({ seconds: 1 }, 10), 1)
  assert.equal(seekPoint({ seconds: 30 }, 10), 9.9)
  assert.equal(seekPoint({ percent: 50 }, 10), 5)
  assert.equal(seekPoint({ percent: 100 }, 10), 9.9)
  assert.equal(seekPoint({ seconds: 1 }, 0.05), 0)
  assert.equal(seekPoint({ seconds: 3 }, undefined), 3)
})

test('PPM frames parse; anything else is unreadable', () => {
  const frame = parsePpm(Buffer.concat([Buffer.from('P6\n2 1\n255\n'), Buffer.from([1, 2, 3, 4, 5, 6])]))
  assert.deepEqual([frame.width, frame.height, [...frame.data]], [2, 1, [1, 2, 3, 4, 5, 6]])
  for (const bad of ['', 'P6\n2 1\n255\n\u0001', 'P5\n1 1\n255\n\u0001', 'P6\n0 0\n255\n']) {
    assert.throws(() => parsePpm(Buffer.from(bad, 'latin1')), { code: 'MEDIA_UNREADABLE' })
  }
})

test('format negotiation from Accept', () => {
  assert.equal(negotiate(undefined), 'jpeg')
  assert.equal(negotiate('image/avif,image/webp,image/apng,*/*;q=0.8'), 'avif')
  assert.equal(negotiate('image/webp;q=0.9, image/avif;q=0'), 'webp')
  assert.equal(negotiate('text/html'), 'jpeg')
})
