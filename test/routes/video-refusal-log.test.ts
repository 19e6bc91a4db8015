// An ffmpeg refusal says why in the log, at debug level (the decoder or filter that refused and its words),
// and never in the reply (issue 44: the log said only "the decoder rejected this media", its detail the input
// report ffmpeg prints before it decodes, which said nothing of why).
import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { build, postMedia } from '../helper.ts'
import { media } from '../media.ts'

/** An H.264 MP4 whose frames are noise: container and stream are read (the report is printed), the decoder refuses. */
async function scrambledFrames (): Promise<Buffer> {
  const video = Buffer.from(await media('mp4-h264-faststart'))
  const mdat = video.indexOf('mdat')
  for (let i = mdat + 20; i < video.length; i++) video[i] = (video[i]! * 7 + 13) & 0xff
  return video
}

test('an ffmpeg refusal: the decoder\'s own words in the debug log, without the input report; the reply says none of it', { timeout: 120_000 }, async (t) => {
  const logs = new PassThrough()
  let logged = ''
  logs.on('data', (chunk: Buffer) => { logged += chunk.toString() })
  const app = await build(t, { LOG_LEVEL: 'debug' }, { logStream: logs })
  const res = await postMedia(app, 'thumbnail', await scrambledFrames(), 'video/mp4')
  assert.equal(res.statusCode, 422, res.body)
  assert.equal(res.json().code, 'THUMBD_MEDIA_UNREADABLE')
  assert.doesNotMatch(res.body, /h264|NAL|ffmpeg|Invalid data|\/tmp/i)

  const refusal = logged.split('\n').filter(line => line !== '').map(line => JSON.parse(line)).find(entry => entry.msg === 'job refused the media')
  assert.ok(refusal !== undefined, 'the refusal is logged')
  assert.equal(refusal.level, 20, 'at debug level')
  const detail: string = refusal.detail
  // The decoder named, as ffmpeg names it in its log prefix, with what it said.
  assert.match(detail, /^ffmpeg exited 1: /)
  assert.match(detail, /^\[h264\] \S.*$/m)
  // Not the input report (container metadata, streams, mapping), nor the addresses in ffmpeg's prefixes.
  assert.doesNotMatch(detail, /Input #0|Stream #0:0|Stream mapping|Metadata:|major_brand| @ 0x/)
})
