// The thumbnail of an audio file is its cover art: ffmpeg copies the embedded picture out (in the sandbox,
// its demuxer forced, as for videos), then it is an image like any other: sniffed from its bytes, decoded as an
// upload of it would be (in the decoder sandbox with IMAGE_DECODER=sandbox) under the image limits. A picture that
// is no image thumbd reads (another MP3, a text) is refused.
import { JobError } from '../../contract/job-error.ts'
import { sniff, type Media } from '../../contract/sniff.ts'
import type { JobContext, JobSource } from '../../contract/types.ts'
import { pictureArgs } from './ffmpeg-args.ts'
import { runTool } from '../tools/index.ts'
import { parseInputReport, REPORT_LINES } from './input-report.ts'
import { MAX_STREAMS, checkLimits } from './probe.ts'
import { toolAccess, videoInput } from './video-input.ts'

type AudioMedia = Extract<Media, { kind: 'audio' }>

/** The embedded picture, a source of its own held in memory: JPEG, PNG, WebP, GIF or AVIF. */
export async function coverArt (source: JobSource & { media: AudioMedia }, ctx: JobContext): Promise<JobSource> {
  const input = videoInput(source.ref)
  const run = await runTool(ctx.settings.ffmpegPath, pictureArgs(input, source.media.demuxer, MAX_STREAMS, ctx.settings.maxInputPixels), {
    signal: ctx.signal,
    // The picture is inside the file: it cannot be larger.
    maxStdoutBytes: source.size,
    children: ctx.settings.children,
    sandbox: ctx.settings.sandbox,
    ...toolAccess(input),
    keepLines: REPORT_LINES,
    anyExitCode: true
  })
  const report = parseInputReport(run.kept)
  if (report.streams === 0) throw new JobError('MEDIA_UNREADABLE', 'the audio file could not be read', run.stderr.trim())
  // The limits of a video (duration, streams), and the picture's declared size against the pixel limit.
  checkLimits(report, ctx)
  // A picture stream, whatever ffmpeg made of it (one it could not size has no stream facts).
  if (!/^ {2}Stream #0:\d+\S*: Video: /m.test(run.kept.split(/\nStream mapping:|\nOutput #0/)[0]!)) throw new JobError('NO_PICTURE', 'this audio file has no cover art')
  if (run.code !== 0 || run.stdout.length === 0) throw new JobError('MEDIA_UNREADABLE', 'the cover art could not be read', `ffmpeg exited ${run.code}: ${run.stderr.trim()}`)
  const picture = sniff(run.stdout)
  if (picture?.kind !== 'image' || picture.format === 'heic') throw new JobError('MEDIA_UNREADABLE', 'the cover art is not an image thumbd reads')
  return { ref: { location: 'memory', bytes: run.stdout }, media: picture, size: run.stdout.length }
}
