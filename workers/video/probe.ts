// A video's facts before any frame: one ffprobe run in the sandbox (or the one a video-set shared), and the limits
// checked on what it found (streams, sample aspect ratio, pixels, duration), as on ffmpeg's own input report.
import { probeArgs } from './ffmpeg-args.ts'
import { MAX_SAR } from './frame-filters.ts'
import { JobError } from '../../contract/job-error.ts'
import { probeFacts, sarValue, type ProbeColour, type StreamFacts } from './stream-colour.ts'
import { runTool } from '../tools/index.ts'
import { toolAccess, type VideoInput } from './video-input.ts'
import type { Media } from '../../contract/sniff.ts'
import type { JobContext } from '../../contract/types.ts'

type VideoMedia = Extract<Media, { kind: 'video' }>
/** What ffprobe reads: a video, or an audio file (its cover art a video stream to ffmpeg). */
type ProbedMedia = Exclude<Media, { kind: 'image' }>

export const MAX_STREAMS = 32
const PROBE_OUTPUT_BYTES = 64 * 1024

export interface VideoInfo {
  duration: number | undefined
  width: number
  height: number
  streams: number
  /** The first video stream's pixel format, colour tags and sample aspect ratio, where known. */
  stream?: StreamFacts
}

export function checkLimits ({ duration, width, height, streams, stream }: VideoInfo, ctx: JobContext): void {
  if (streams > MAX_STREAMS) throw new JobError('MEDIA_UNREADABLE', `more than ${MAX_STREAMS} streams`)
  const sar = sarValue(stream?.sar)
  if (sar > MAX_SAR || sar < 1 / MAX_SAR) throw new JobError('MEDIA_UNREADABLE', `a sample aspect ratio of ${stream!.sar!.join(':')} is not plausible`)
  if (width * height > ctx.settings.maxInputPixels) {
    throw new JobError('PAYLOAD_TOO_LARGE', `video frames of ${width}x${height} exceed the pixel limit`)
  }
  if (duration !== undefined && duration > ctx.settings.maxVideoSeconds) {
    throw new JobError('PAYLOAD_TOO_LARGE', `video of ${Math.round(duration)} s exceeds the duration limit`)
  }
}

/** A stream as ffprobe reports it; codec_name and the fields after duration only with probeArgs' details. */
interface ProbeStream extends ProbeColour {
  codec_type?: string
  codec_name?: string
  width?: number
  height?: number
  duration?: string
  avg_frame_rate?: string
  r_frame_rate?: string
  side_data_list?: Array<{ rotation?: number }>
}

export interface ProbeJson {
  format?: { duration?: string, nb_streams?: number, format_name?: string }
  streams?: ProbeStream[]
}

export async function probeVideo (input: VideoInput, media: VideoMedia, ctx: JobContext): Promise<VideoInfo> {
  return (await probeWithLimits(input, media, ctx)).info
}

/** One ffprobe run, in the sandbox, and the limits checked on what it found; `details` for /api/info. */
export async function probeWithLimits (input: VideoInput, media: ProbedMedia, ctx: JobContext, details = false): Promise<{ probe: ProbeJson, info: VideoInfo }> {
  // A video-set probed its one source once, with details, its limits checked: its members take that.
  if (ctx.shared !== undefined) return ctx.shared.probe as { probe: ProbeJson, info: VideoInfo }
  const { stdout } = await runTool(ctx.settings.ffprobePath, probeArgs(input, media.demuxer, details), { signal: ctx.signal, maxStdoutBytes: PROBE_OUTPUT_BYTES, children: ctx.settings.children, sandbox: ctx.settings.sandbox, ...toolAccess(input) })
  let probe: ProbeJson
  try {
    probe = JSON.parse(stdout.toString('utf8')) as ProbeJson
  } catch {
    throw new JobError('MEDIA_UNREADABLE', 'the container could not be read')
  }
  const streams = probe.streams ?? []
  const video = streams.find(s => s.codec_type === 'video' && (s.width ?? 0) > 0 && (s.height ?? 0) > 0)
  const info: VideoInfo = {
    duration: positive(probe.format?.duration) ?? positive(video?.duration),
    width: video?.width ?? 0,
    height: video?.height ?? 0,
    streams: probe.format?.nb_streams ?? streams.length,
    ...(video === undefined ? {} : { stream: probeFacts(video) })
  }
  checkLimits(info, ctx)
  if (video === undefined && media.kind === 'video') throw new JobError('MEDIA_UNREADABLE', 'no decodable video stream')
  return { probe, info }
}

export function positive (value: string | undefined): number | undefined {
  const n = Number(value)
  return Number.isFinite(n) && n > 0 ? n : undefined
}
