// /api/info: what a source is, read from its headers without decoding a pixel: for images sharp's header
// pass (with IMAGE_DECODER=sandbox the same libvips' in the decoder sandbox; HEIC included: sharp's HEIF loader
// reads the container though it cannot decode HEVC), for videos one ffprobe run, in the sandbox, with the details a
// client needs to decide what to ask for.
import sharp from 'sharp'
import type { InfoTask, JobContext, MediaInfo } from '../../contract/types.ts'
import { readHeader } from '../image/header-sandboxed.ts'
import { classify, storedImage } from '../image/image.ts'
import { probeWithLimits, type ProbeJson, type VideoInfo } from './probe.ts'
import { videoInput, type VideoInput } from './video-input.ts'
import { bitDepth, isHdr, sarValue } from './stream-colour.ts'

export async function info (task: InfoTask, ctx: JobContext): Promise<MediaInfo> {
  const { ref, media } = task.source
  if (media.kind === 'video') return videoInfo(videoInput(ref), media.format, media, ctx)
  if (media.kind === 'audio') return audioInfo(videoInput(ref), media, ctx)
  try {
    // IMAGE_DECODER=sandbox: read in the decoder sandbox (workers/image/header-sandboxed.ts).
    const meta = await readHeader(ref, ctx) ?? await sharp(storedImage(ref), { limitInputPixels: ctx.settings.maxInputPixels }).metadata()
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
  const facts = info.stream ?? { width: info.width, height: info.height }
  const depth = bitDepth(facts.pixFmt)
  const tag = (value: string | undefined) => value === undefined || value === 'unknown' || value === 'unspecified' ? undefined : value
  const [transfer, primaries, space] = [tag(facts.transfer), tag(facts.primaries), tag(facts.matrix)]
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
    rotation,
    ...(facts.sar === undefined || facts.sar[0] === 0 ? {} : { sampleAspectRatio: facts.sar.join(':') }),
    ...(depth === undefined ? {} : { bitDepth: depth }),
    ...(transfer === undefined ? {} : { colorTransfer: transfer }),
    ...(primaries === undefined ? {} : { colorPrimaries: primaries }),
    ...(space === undefined ? {} : { colorSpace: space }),
    hdr: isHdr(facts)
  }
}

/** An audio file: its codec and duration, and whether it carries a picture (the size given is the picture's). */
async function audioInfo (input: VideoInput, media: Parameters<typeof probeWithLimits>[1], ctx: JobContext): Promise<MediaInfo> {
  const { probe, info } = await probeWithLimits(input, media, ctx, true)
  const audio = probe.streams?.find(s => s.codec_type === 'audio')
  return {
    kind: 'audio',
    format: media.format,
    ...(probe.format?.format_name === undefined ? {} : { container: probe.format.format_name }),
    codec: audio?.codec_name ?? 'unknown',
    width: info.width,
    height: info.height,
    ...(info.duration === undefined ? {} : { duration: info.duration }),
    audio: audio === undefined ? null : { codec: audio.codec_name ?? 'unknown' },
    hasPicture: info.stream !== undefined
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
  // The sample aspect ratio widens (or heightens) the stored frame, as players show it.
  const sar = sarValue(info.stream?.sar)
  const [w, h] = sar >= 1 ? [Math.round(info.width * sar), info.height] : [info.width, Math.round(info.height / sar)]
  return { width: sideways ? h : w, height: sideways ? w : h, rotation }
}

/** "30000/1001" -> 29.97 */
export function rate (value: string | undefined): number | undefined {
  const [n, d] = (value ?? '').split('/').map(Number)
  return n !== undefined && d !== undefined && n > 0 && d > 0 ? Math.round((n / d) * 1000) / 1000 : undefined
}
