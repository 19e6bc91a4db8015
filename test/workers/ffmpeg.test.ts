import assert from 'node:assert/strict'
import { test } from 'node:test'
import { frameArgs, probeArgs } from '../../workers/video/ffmpeg-args.ts'
import { BEST_OF_SIDE, insideScale } from '../../workers/video/frame-filters.ts'
import { parsePam } from '../../workers/image/pam.ts'
import { colourPath } from '../../workers/video/stream-colour.ts'
import { parseInputReport, REPORT_LINES, shownAt } from '../../workers/video/input-report.ts'
import { seekPoint } from '../../workers/video/video.ts'
import { videoInput } from '../../workers/video/video-input.ts'
import { negotiate } from '../../src/routes/options.ts'

const fileInput = (path: string) => videoInput({ location: 'file', path })
const colour = colourPath({ width: 1920, height: 1080 })

/** The guard every input carries: one protocol only (local files, or http to the range reader), demuxer forced, then the input. */
function assertGuardedInput (args: string[], demuxer: string, path: string, protocols = 'file') {
  const input = args.indexOf('-i')
  assert.equal(args[input + 1], protocols === 'file' ? `file:${path}` : path)
  assert.deepEqual(args.slice(input - 2, input), ['-f', demuxer])
  const whitelist = args.indexOf('-protocol_whitelist')
  assert.ok(whitelist >= 0 && whitelist < input && args[whitelist + 1] === protocols)
  if (demuxer === 'mov') assert.deepEqual(args.slice(input - 6, input - 2), ['-enable_drefs', '0', '-use_absolute_path', '0'])
  assert.equal(args.filter(a => a === '-i').length, 1)
}

test('probe and frame command lines read only the local file through the forced demuxer', () => {
  assertGuardedInput(probeArgs(fileInput('/tmp/x'), 'mov'), 'mov', '/tmp/x')
  const frame = frameArgs({ input: fileInput('/tmp/y'), demuxer: 'matroska', seekSeconds: 12.5, bestOf: 0, threads: 1, maxPixels: 1000, maxStreams: 32, report: true, colour })
  assertGuardedInput(frame, 'matroska', '/tmp/y')
  assert.ok(frame.indexOf('-ss') < frame.indexOf('-i'), 'seek before the input (fast seek)')
  assert.equal(frame[frame.indexOf('-ss') + 1], '12.500')
  assert.ok(frame.includes('-nostdin'))
  assert.deepEqual(frame.slice(-5), ['-f', 'image2pipe', '-c:v', 'pam', 'pipe:1'])
  // No box: only square pixels (an identity scale for square ones) and 8-bit RGB(A) through the BT.709 matrix.
  assert.match(frame[frame.indexOf('-vf') + 1]!, /^scale=.*setsar=1,scale=in_color_matrix=bt709,format=pix_fmts=rgba\|rgb24$/)
  assert.equal(frame[frame.indexOf('-max_pixels') + 1], '1000')
  assert.equal(frame[frame.indexOf('-max_streams') + 1], '32')
  assert.ok(frame.indexOf('-max_pixels') < frame.indexOf('-i'), 'limits are input options')
  assert.equal(frame[frame.indexOf('-loglevel') + 1], 'info')
  const best = frameArgs({ input: fileInput('/tmp/y'), demuxer: 'avi', seekSeconds: 0, bestOf: 50, threads: 2, maxPixels: 1000, maxStreams: 32, report: false, colour })
  assert.equal(best[best.indexOf('-loglevel') + 1], 'error')
  // The frames the thumbnail filter holds are shrunk first (its memory grows with frames x frame size).
  assert.ok(best[best.indexOf('-vf') + 1]!.includes(`setsar=1,${insideScale(BEST_OF_SIDE)},thumbnail=n=50,scale=in_color_matrix`))
  const boxed = frameArgs({ input: fileInput('/tmp/y'), demuxer: 'avi', seekSeconds: 0, bestOf: 50, threads: 2, maxPixels: 1000, maxStreams: 32, report: false, coverBox: { width: 640 }, colour })
  assert.match(boxed[boxed.indexOf('-vf') + 1]!, /^scale=.*640.*,setsar=1,scale=.*,thumbnail=n=50,scale=in_color_matrix=bt709,format=pix_fmts=rgba\|rgb24$/)
})

test('a one-thread keyframe grab decodes from the keyframe without skipping; frame threads and best-of still skip non-keyframes', () => {
  const keyframeGrab = (threads: number, bestOf: number) => frameArgs({ input: fileInput('/tmp/y'), demuxer: 'mov', seekSeconds: 8, keyframe: true, bestOf, threads, maxPixels: 1000, maxStreams: 32, report: false, colour })
  const lane = keyframeGrab(1, 0)
  assert.ok(lane.includes('-noaccurate_seek'))
  // -skip_frame nokey made a 4K HEVC Main 10 grab peak at 391 MB instead of 240 MB, for the same frame.
  assert.ok(!lane.includes('-skip_frame'), 'one thread, one frame: the keyframe is the first decoded')
  for (const [threads, bestOf] of [[2, 0], [1, 50]] as const) {
    const args = keyframeGrab(threads, bestOf)
    assert.equal(args[args.indexOf('-skip_frame') + 1], 'nokey', `threads ${threads}, best of ${bestOf}`)
  }
  assert.ok(!frameArgs({ input: fileInput('/tmp/y'), demuxer: 'mov', seekSeconds: 8, bestOf: 0, threads: 2, maxPixels: 1000, maxStreams: 32, report: false, colour }).includes('-skip_frame'), 'exact seeks decode every frame')
})

test('a seek bounded past its keyframe: from the keyframe, the reference frames decoded, the first at the time or the n-th taken', () => {
  const args = frameArgs({ input: fileInput('/tmp/y'), demuxer: 'mov', seekSeconds: 8, keyframe: true, upTo: 250, bestOf: 0, threads: 2, maxPixels: 1000, maxStreams: 32, report: false, colour })
  assert.ok(args.includes('-noaccurate_seek'))
  assert.equal(args[args.indexOf('-skip_frame') + 1], 'noref', 'not nokey: the frames between the keyframe and the time are decoded, even on frame threads')
  assert.match(args[args.indexOf('-vf') + 1]!, /^select='gte\(t,0\)\+gte\(n,250\)',scale=/)
  assert.equal(args[args.indexOf('-fps_mode') + 1], 'passthrough')
})

test('a keyframe grab can say where it landed: showinfo last in the chain, at info level; its time counts from the seek point', () => {
  const args = frameArgs({ input: fileInput('/tmp/y'), demuxer: 'mov', seekSeconds: 13.125, keyframe: true, showTime: true, bestOf: 0, threads: 1, maxPixels: 1000, maxStreams: 32, report: false, colour })
  assert.match(args[args.indexOf('-vf') + 1]!, /,format=pix_fmts=rgba\|rgb24,showinfo$/)
  assert.equal(args[args.indexOf('-loglevel') + 1], 'info')
  const line = '[Parsed_showinfo_3 @ 0x5598d930be80] n:   0 pts: -73600 pts_time:-4.79167 pos:   794475 fmt:rgb24 sar:1/1 s:160x90 i:P iskey:1 type:I'
  assert.ok(REPORT_LINES.test(line), 'kept')
  assert.equal(shownAt(`  Duration: 00:00:30.00\n${line}`, 13.125), 8.333)
  assert.equal(shownAt(line.replace('n:   0', 'n:   1'), 13.125), undefined, 'the first frame only')
  assert.equal(shownAt('', 13.125), undefined)
})

test('a remote video is read over http from the range reader only, its demuxer still forced; sources in memory are refused', () => {
  const remote = videoInput({ location: 'remote', url: 'http://127.0.0.1:4567/token', port: 4567 })
  assert.deepEqual([remote.reads, remote.connectPort], [[], 4567], 'no file to read, one port to connect to')
  assertGuardedInput(probeArgs(remote, 'mov'), 'mov', 'http://127.0.0.1:4567/token', 'http,tcp')
  assertGuardedInput(frameArgs({ input: remote, demuxer: 'matroska', seekSeconds: 1, bestOf: 0, threads: 1, maxPixels: 1000, maxStreams: 32, report: false, colour }), 'matroska', 'http://127.0.0.1:4567/token', 'http,tcp')
  assert.throws(() => videoInput({ location: 'memory', bytes: new Uint8Array(1) }), /internal/)
})

test("ffmpeg's input report gives duration, frame size and stream count; metadata cannot pass for it", () => {
  const report = [
    "Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'file:/tmp/x':",
    '  Metadata:',
    '    title           : x',
    '                    :   Duration: 00:00:01.00, start: 0',
    '    comment         : Stream #0:9: Video: h264, 10x10',
    '  Duration: 01:02:03.50, start: 0.000000, bitrate: 333 kb/s',
    '  Stream #0:0[0x1](und): Video: h264 (High) (avc1 / 0x31637661), yuv420p(progressive), 1920x1080 [SAR 1:1 DAR 16:9], 25 fps',
    '  Stream #0:1[0x2](und): Audio: aac (LC), 48000 Hz, stereo, fltp, 128 kb/s',
    'Stream mapping:',
    '  Stream #0:0 -> #0:0 (h264 (native) -> ppm (native))'
  ].join('\n')
  assert.deepEqual(parseInputReport(report), { duration: 3723.5, width: 1920, height: 1080, streams: 2, stream: { width: 1920, height: 1080, pixFmt: 'yuv420p', sar: [1, 1] } })
  assert.deepEqual(parseInputReport(''), { duration: undefined, width: 0, height: 0, streams: 0 })
})

test('seek points stay inside the video', () => {
  assert.equal(seekPoint({ seconds: 1 }, 10), 1)
  assert.equal(seekPoint({ seconds: 30 }, 10), 9.9)
  assert.equal(seekPoint({ percent: 50 }, 10), 5)
  assert.equal(seekPoint({ percent: 100 }, 10), 9.9)
  assert.equal(seekPoint({ seconds: 1 }, 0.05), 0)
  assert.equal(seekPoint({ seconds: 3 }, undefined), 3)
})

test('PAM frames (8-bit RGB or RGBA) parse; anything else is unreadable', () => {
  const pam = (depth: number, type: string, w = 2) => `P7\nWIDTH ${w}\nHEIGHT 1\nDEPTH ${depth}\nMAXVAL 255\nTUPLTYPE ${type}\nENDHDR\n`
  const rgb = parsePam(Buffer.concat([Buffer.from(pam(3, 'RGB')), Buffer.from([1, 2, 3, 4, 5, 6])]))
  assert.deepEqual([rgb.width, rgb.height, rgb.channels, [...rgb.data]], [2, 1, 3, [1, 2, 3, 4, 5, 6]])
  const rgba = parsePam(Buffer.concat([Buffer.from(pam(4, 'RGB_ALPHA', 1)), Buffer.from([1, 2, 3, 4])]))
  assert.deepEqual([rgba.width, rgba.channels, [...rgba.data]], [1, 4, [1, 2, 3, 4]])
  const sixteen = 'P7\nWIDTH 1\nHEIGHT 1\nDEPTH 3\nMAXVAL 65535\nTUPLTYPE RGB\nENDHDR\n\u0001\u0001\u0001\u0001\u0001\u0001'
  for (const bad of ['', pam(3, 'RGB') + '\u0001', pam(4, 'RGB') + '\u0001'.repeat(8), pam(3, 'RGB', 0), 'P6\n1 1\n255\n\u0001\u0001\u0001', sixteen]) {
    assert.throws(() => parsePam(Buffer.from(bad, 'latin1')), { code: 'MEDIA_UNREADABLE' })
  }
})

test('format negotiation from Accept', () => {
  assert.equal(negotiate(undefined), 'jpeg')
  assert.equal(negotiate('image/avif,image/webp,image/apng,*/*;q=0.8'), 'avif')
  assert.equal(negotiate('image/webp;q=0.9, image/avif;q=0'), 'webp')
  assert.equal(negotiate('text/html'), 'jpeg')
})
