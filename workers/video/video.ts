// Video in: one ffmpeg run decodes the frame and reports the input (duration, streams, frame size) on
// stderr, with the decoder and demuxer enforcing the pixel and stream limits themselves. ffprobe runs only
// when the position is a percentage, which needs the duration before seeking.
import { frameArgs } from './ffmpeg-args.ts'
import { BEST_OF_SIDE, frameFilters, type Bound, type Box } from './frame-filters.ts'
import { JobError } from '../../contract/job-error.ts'
import { parsePam, type RawFrame } from '../image/pam.ts'
import { parseInputReport, REPORT_LINES, shownAt } from './input-report.ts'
import { colourPath, parseStreamLine, type ColourPath } from './stream-colour.ts'
import { checkLimits, MAX_STREAMS, probeVideo, type VideoInfo } from './probe.ts'
import { runTool, type ToolRun } from '../tools/index.ts'
import { toolAccess, type VideoInput } from './video-input.ts'
import type { Demuxer, Media } from '../../contract/sniff.ts'
import type { FramePosition, JobContext, VideoOptions } from '../../contract/types.ts'

type VideoMedia = Extract<Media, { kind: 'video' }>
/** Frames the thumbnail filter compares for frame=best (about two seconds at 25 fps), fewer for large frames. */
const BEST_OF_FRAMES = 50
const MIN_BEST_OF_FRAMES = 8
/** What the thumbnail filter may hold: its frames are RGB, all in memory at once. */
const BEST_OF_BYTES = 128 * 2 ** 20

/**
 * How many frames frame=best compares: as many as fit BEST_OF_BYTES at the largest size they can have (both
 * sides at most BEST_OF_SIDE, and one side at most the cover box's, which the scaling before it gives).
 */
export function bestOfFrames (coverBox: { width?: number, height?: number } | undefined): number {
  const shortSide = Math.min(BEST_OF_SIDE, coverBox?.width ?? BEST_OF_SIDE, coverBox?.height ?? BEST_OF_SIDE)
  return Math.max(MIN_BEST_OF_FRAMES, Math.min(BEST_OF_FRAMES, Math.floor(BEST_OF_BYTES / (shortSide * BEST_OF_SIDE * 3))))
}
/** Demuxers that seek by bisecting timestamps, with no index of keyframes: a seek can land past the last one. */
const UNINDEXED = new Set<Demuxer>(['mpegts', 'mpeg'])
/** Default frame position: one second in, where fades from black are usually over. */
export const DEFAULT_AT: FramePosition = { seconds: 1 }

/** ffmpeg shrinks the frame to about twice the output size: sharp's final resize still has detail to work with. */
export const PRESCALE_FACTOR = 2

/** The colour path taken before the input report says otherwise: what most video is (SDR BT.709, HD). */
const USUAL_COLOUR = colourPath({ width: 1920, height: 1080 })
const sameChain = (a: ColourPath, b: ColourPath) => frameFilters({ bestOf: 0, colour: a }) === frameFilters({ bestOf: 0, colour: b })

/** Pixels of slack around a bound: the probe's display size and the filter chain's round differently. */
const BOUND_SLACK = 8

/**
 * The bound of grabs whose video was probed at `display` (its size as shown): what the prescale below makes
 * of a frame of that size, and a little more. An ordinary video passes untouched; only a stream that
 * changed shape after its probe is cut down, as `fit` says.
 */
export function boundFor (display: { width: number, height: number }, output: { width?: number, height?: number }, fit: Bound['fit']): Bound {
  const ratios = [output.width, output.height].map((side, i) => side === undefined ? undefined : (side * PRESCALE_FACTOR) / (i === 0 ? display.width : display.height)).filter(r => r !== undefined)
  const scale = ratios.length === 0 ? 1 : Math.min(1, Math.max(...ratios))
  return { width: Math.ceil(display.width * scale) + BOUND_SLACK, height: Math.ceil(display.height * scale) + BOUND_SLACK, fit }
}

/** How a frame is taken: VideoOptions, and (for previews) an exact seek bounded in frames past its keyframe. */
export interface GrabOptions extends VideoOptions {
  /** Seek to the keyframe, then decode on to `at` but no more than this many frames (FrameRequest.upTo). */
  exactWithin?: number
  /** Say when in the video the frame taken is (a keyframe seek: where it landed), as GrabbedFrame.seconds. */
  showTime?: boolean
}

/** A frame, and with GrabOptions.showTime its time in the video (seconds, to the ms) where ffmpeg said it. */
export type GrabbedFrame = RawFrame & { seconds?: number }

/** Room for a PAM header of any size ffmpeg writes. */
const PAM_HEADER_BYTES = 128

/**
 * `output`: the size the frame will be resized to, if known; ffmpeg may then shrink it on the way out.
 * `bound`: the most the frame may be, whatever the stream does after its probe; ffmpeg brings it inside, and
 * a frame over it is refused as its first bytes past that size arrive, not once held whole.
 */
export async function grabFrame (input: VideoInput, media: VideoMedia, options: GrabOptions, ctx: JobContext, output?: { width?: number, height?: number }, bound?: Bound): Promise<GrabbedFrame> {
  const at = options.at ?? DEFAULT_AT
  const coverBox = output === undefined
    ? undefined
    : { width: output.width === undefined ? undefined : output.width * PRESCALE_FACTOR, height: output.height === undefined ? undefined : output.height * PRESCALE_FACTOR }
  const shared = sharedFrame(ctx, options, coverBox, bound)
  if (shared !== undefined) return shared
  const grab = (seekSeconds: number, report: boolean, colour: ColourPath, signal = ctx.signal, onKeptLine?: (line: string) => void) => runTool(ctx.settings.ffmpegPath, frameArgs({
    input,
    demuxer: media.demuxer,
    ...(media.decoder === undefined ? {} : { decoder: media.decoder }),
    seekSeconds,
    keyframe: options.seek === 'keyframe' || options.exactWithin !== undefined,
    ...(options.exactWithin === undefined ? {} : { upTo: options.exactWithin }),
    bestOf: options.best ? bestOfFrames(coverBox) : 0,
    threads: ctx.settings.ffmpegThreads,
    maxPixels: ctx.settings.maxInputPixels,
    maxStreams: MAX_STREAMS,
    report,
    showTime: options.showTime === true,
    coverBox,
    bound,
    colour
  }), { signal, maxStdoutBytes: (bound === undefined ? ctx.settings.maxInputPixels : bound.width * bound.height) * 4 + PAM_HEADER_BYTES, children: ctx.settings.children, sandbox: ctx.settings.sandbox, ...toolAccess(input), keepLines: REPORT_LINES, ...(onKeptLine === undefined ? {} : { onKeptLine }), anyExitCode: true })

  /**
   * One run that reports the input as it decodes, with the usual colour path. When the report's video
   * stream needs another (HDR, BT.2020, BT.601, untagged SD), the run is stopped there, before decoding, and
   * started again with the right one: what a separate ffprobe run would cost, paid only by such video.
   */
  const grabReporting = async (seekSeconds: number): Promise<{ run: ToolRun, colour: ColourPath }> => {
    const restart = new AbortController()
    let needed: ColourPath | undefined
    try {
      const run = await grab(seekSeconds, true, USUAL_COLOUR, AbortSignal.any([ctx.signal, restart.signal]), line => {
        const stream = needed === undefined ? parseStreamLine(line) : undefined
        if (stream === undefined) return
        needed = colourPath(stream)
        if (!sameChain(needed, USUAL_COLOUR)) restart.abort()
      })
      return { run, colour: USUAL_COLOUR }
    } catch (err) {
      if (ctx.signal.aborted || !restart.signal.aborted || needed === undefined) throw err
      return { run: await grab(seekSeconds, true, needed), colour: needed }
    }
  }

  let info: VideoInfo | undefined
  let first: ToolRun
  let colour: ColourPath
  let firstSeek: number
  if ('seconds' in at) {
    firstSeek = at.seconds
    ;({ run: first, colour } = await grabReporting(firstSeek))
    info = parseInputReport(first.kept)
    checkLimits(info, ctx)
  } else {
    info = await probeVideo(input, media, ctx)
    colour = colourPath(info.stream ?? { width: info.width, height: info.height })
    firstSeek = seekPoint(at, info.duration)
    first = await grab(firstSeek, false, colour)
  }
  const frame = (run: ToolRun, seekSeconds: number): GrabbedFrame => {
    const taken = within(parsePam(run.stdout), bound)
    const seconds = options.showTime === true ? shownAt(run.kept, seekSeconds) : undefined
    return seconds === undefined ? taken : { ...taken, seconds }
  }
  if (succeeded(first, ctx).stdout.length > 0) return frame(first, firstSeek)
  // Nothing decoded there: the position is past the end. Take the last moment that has a frame.
  const last = info.duration === undefined ? 0 : seekPoint(at, info.duration)
  const retry = await grab(last, false, colour)
  if (succeeded(retry, ctx).stdout.length > 0 || last === 0) return frame(retry, last)
  // Still nothing: the last frame starts more than 0.1 s before the end (a slow frame rate), or a container
  // without an index was seeked by bisection past its only keyframe (then the first frame is the one).
  const lastResort = UNINDEXED.has(media.demuxer) ? 0 : Math.max(0, last - 1)
  return frame(succeeded(await grab(lastResort, false, colour), ctx), lastResort)
}

/**
 * What makes a grab's pixels, past the decoder: the exact seek's time (as frameArgs writes it), the frames best-of
 * compares, the cover box and the bound. A video-set's pass (workers/video-set/video-set.ts) keys its frames so.
 */
export function frameKey (seconds: number, bestOf: number, coverBox: Box | undefined, bound: Bound | undefined): string {
  return JSON.stringify([seconds.toFixed(3), bestOf, coverBox?.width ?? null, coverBox?.height ?? null, bound ?? null])
}

/** The frame a video-set's pass decoded for this grab, if it did (exact seeks only: a keyframe seek takes another frame). */
function sharedFrame (ctx: JobContext, options: GrabOptions, coverBox: Box | undefined, bound: Bound | undefined): GrabbedFrame | undefined {
  if (ctx.shared === undefined || options.seek === 'keyframe' || options.exactWithin !== undefined) return undefined
  const at = options.at ?? DEFAULT_AT
  const seconds = 'seconds' in at ? at.seconds : seekPoint(at, (ctx.shared.probe as { info: VideoInfo }).info.duration)
  return ctx.shared.frames.get(frameKey(seconds, options.best ? bestOfFrames(coverBox) : 0, coverBox, bound))
}

/** The frame as asked: the byte cap let no larger one be held whole, and this refuses one of another shape. */
function within (frame: RawFrame, bound: Bound | undefined): RawFrame {
  if (bound !== undefined && (frame.width > bound.width || frame.height > bound.height)) {
    throw new JobError('MEDIA_UNREADABLE', 'the decoder gave a frame larger than asked', `${frame.width}x${frame.height} over ${bound.width}x${bound.height}`)
  }
  return frame
}

function succeeded (run: ToolRun, ctx: JobContext): ToolRun {
  // A frame the decoder refused for its size (libavutil's line is kept wherever it came) is over the limit.
  if (run.code !== 0) checkLimits(parseInputReport(run.kept), ctx)
  if (run.code !== 0) throw new JobError('MEDIA_UNREADABLE', 'the decoder rejected this media', `ffmpeg exited ${run.code}: ${run.why}`)
  return run
}

/** Seconds to seek to, kept inside the video so a frame exists there. */
export function seekPoint (at: FramePosition, duration: number | undefined): number {
  const wanted = 'percent' in at ? ((duration ?? 0) * at.percent) / 100 : at.seconds
  if (duration === undefined) return wanted
  // Past the end means the last moment that still has a frame after it.
  return Math.min(wanted, Math.max(0, duration - 0.1))
}
