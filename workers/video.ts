// Video in: ffprobe checks the limits and finds the duration, ffmpeg decodes one frame.
import { frameArgs, probeArgs } from './ffmpeg-args.ts'
import { JobError } from './job-error.ts'
import { parsePpm, type RawFrame } from './ppm.ts'
import { runTool } from './spawn.ts'
import type { Media } from './sniff.ts'
import type { FramePosition, JobContext, VideoOptions } from './types.ts'

type VideoMedia = Extract<Media, { kind: 'video' }>

const MAX_STREAMS = 32
const PROBE_OUTPUT_BYTES = 64 * 1024
/** Frames the thumbnail filter compares for frame=best (about two seconds at 25 fps). */
const BEST_OF_FRAMES = 50
/** Default frame position: one second in, where fades from black are usually over. */
const DEFAULT_AT: FramePosition = { seconds: 1 }

export interface VideoInfo {
  duration: number | undefined
  width: number
  height: number
}

interface ProbeJson {
  format?: { duration?: string, nb_streams?: number }
  streams?: Array<{ codec_type?: string, width?: number, height?: number, duration?: string }>
}

export async function probeVideo (path: string, media: VideoMedia, ctx: JobContext): Promise<VideoInfo> {
  const { stdout } = await runTool(ctx.settings.ffprobePath, probeArgs(path, media.demuxer), { signal: ctx.signal, maxStdoutBytes: PROBE_OUTPUT_BYTES, children: ctx.settings.children, sandbox: ctx.settings.sandbox })
  let probe: ProbeJson
  try {
    probe = JSON.parse(stdout.toString('utf8')) as ProbeJson
  } catch {
    throw new JobError('MEDIA_UNREADABLE', 'the container could not be read')
  }
  const streams = probe.streams ?? []
  if ((probe.format?.nb_streams ?? streams.length) > MAX_STREAMS) {
    throw new JobError('MEDIA_UNREADABLE', `more than ${MAX_STREAMS} streams`)
  }
  const video = streams.find(s => s.codec_type === 'video' && (s.width ?? 0) > 0 && (s.height ?? 0) > 0)
  if (video === undefined) throw new JobError('MEDIA_UNREADABLE', 'no decodable video stream')
  const width = video.width ?? 0
  const height = video.height ?? 0
  if (width * height > ctx.settings.maxInputPixels) {
    throw new JobError('PAYLOAD_TOO_LARGE', `video frames of ${width}x${height} exceed the pixel limit`)
  }
  const duration = positive(probe.format?.duration) ?? positive(video.duration)
  if (duration !== undefined && duration > ctx.settings.maxVideoSeconds) {
    throw new JobError('PAYLOAD_TOO_LARGE', `video of ${Math.round(duration)} s exceeds the duration limit`)
  }
  return { duration, width, height }
}

export async function grabFrame (path: string, media: VideoMedia, options: VideoOptions, ctx: JobContext): Promise<RawFrame> {
  const info = await probeVideo(path, media, ctx)
  const seekSeconds = seekPoint(options.at ?? DEFAULT_AT, info.duration)
  const grab = (at: number) => runTool(ctx.settings.ffmpegPath, frameArgs({
    path,
    demuxer: media.demuxer,
    seekSeconds: at,
    bestOf: options.best ? BEST_OF_FRAMES : 0,
    threads: ctx.settings.ffmpegThreads
  }), { signal: ctx.signal, maxStdoutBytes: info.width * info.height * 3 + 64, children: ctx.settings.children, sandbox: ctx.settings.sandbox })
  let { stdout } = await grab(seekSeconds)
  // Seeking past the last decodable frame (short or badly muxed files) yields nothing: take the start instead.
  if (stdout.length === 0 && seekSeconds > 0) ({ stdout } = await grab(0))
  return parsePpm(stdout)
}

/** Seconds to seek to, kept inside the video so a frame exists there. */
export function seekPoint (at: FramePosition, duration: number | undefined): number {
  const wanted = 'percent' in at ? ((duration ?? 0) * at.percent) / 100 : at.seconds
  if (duration === undefined) return wanted
  // Past the end means the last moment that still has a frame after it.
  return Math.min(wanted, Math.max(0, duration - 0.1))
}

function positive (value: string | undefined): number | undefined {
  const n = Number(value)
  return Number.isFinite(n) && n > 0 ? n : undefined
}
