// /api/info: what a source is, read from its headers without decoding a pixel: for images sharp's header
// pass (HEIC included: sharp's HEIF loader reads the container though it cannot decode HEVC), for videos one
// ffprobe run, in the sandbox, with the details a client needs to decide what to ask for.
import sharp from 'sharp'
import type { InfoTask, JobContext, MediaInfo } from '../contract/types.ts'
import { classify, storedImage } from './image.ts'
import { probeWithLimits, type ProbeJson, type VideoInfo } from './video.ts'
import { videoInput, type VideoInput } from './video-input.ts'

export async function info (task: InfoTask, ctx: JobContext): Promise<MediaInfo> {
  const { ref, media } = task.source
  if (media.kind === 'video') return videoInfo(videoInput(ref), media.format, media, ctx)
  try {
    const meta = await sharp(storedImage(ref), { limitInputPixels: ctx.settings.maxInputPixels }).metadata()
    const [w, h] = [meta.width ?? 0, meta.height ?? 0]
    const turned = (meta.orientation ?? 1) >= 5
    return {
      kind: 'image',
      format: media.format,
      codec: meta.format,
      width: turned ? h : w,
      height: turned ? w : h,
      ...(meta.orientation === undefined ? {} : { orientation: meta.orientation }),
      ...(meta.pages === undefined ? {} : { pages: meta.pages }),
      hasAlpha: meta.hasAlpha ?? false
    }
  } catch (err) {
    throw classify(err)
  }
}

async function videoInfo (input: VideoInput, format: string, media: Parameters<typeof probeWithLimits>[1], ctx: JobContext): Promise<MediaInfo> {
  // The same limits as every video job (duration, frame size, streams), from the same one run.
  const { probe, info } = await probeWithLimits(input, media, ctx, true)
  const video = probe.streams!.find(s => s.codec_type === 'video' && (s.width ?? 0) > 0)!
  const audio = probe.streams?.find(s => s.codec_type === 'audio')
  const { width, height, rotation } = displayed(probe, info)
  const frameRate = rate(video.avg_frame_rate) ?? rate(video.r_frame_rate)
  return {
    kind: 'video',
    format,
    ...(probe.format?.format_name === undefined ? {} : { container: probe.format.format_name }),
    codec: video.codec_name ?? 'unknown',
    width,
    height,
    ...(info.duration === undefined ? {} : { duration: info.duration }),
    ...(frameRate === undefined ? {} : { frameRate }),
    audio: audio === undefined ? null : { codec: audio.codec_name ?? 'unknown' },
    rotation
  }
}

/** A video's frame as shown, from a probe run with details: its display-matrix rotation applied. */
export function displayed (probe: ProbeJson, info: VideoInfo): { width: number, height: number, rotation: number } {
  const video = probe.streams?.find(s => s.codec_type === 'video' && (s.width ?? 0) > 0)
  // ffprobe's display-matrix rotation is counter-clockwise: 90 shows the picture turned a quarter to the left,
  // as ffmpeg's own autorotate does (checked frame by frame), so 270 clockwise.
  const turn = video?.side_data_list?.find(d => d.rotation !== undefined)?.rotation ?? 0
  const rotation = ((Math.round(-turn / 90) * 90) % 360 + 360) % 360
  const sideways = rotation === 90 || rotation === 270
  return { width: sideways ? info.height : info.width, height: sideways ? info.width : info.height, rotation }
}

/** "30000/1001" -> 29.97 */
function rate (value: string | undefined): number | undefined {
  const [n, d] = (value ?? '').split('/').map(Number)
  return n !== undefined && d !== undefined && n > 0 && d > 0 ? Math.round((n / d) * 1000) / 1000 : undefined
}
