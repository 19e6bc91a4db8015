// The ffmpeg/ffprobe command lines, built by hand (fluent-ffmpeg is archived; see README).
// Every input is read the same guarded way: one protocol (the spooled file, or http to thumbd's loopback
// range reader), demuxer forced from the sniffed type, so playlists (hls, concat), image2 patterns and
// other protocols are never auto-selected.
import type { Demuxer } from '../contract/sniff.ts'
import type { VideoInput } from './video-input.ts'

const quiet = ['-hide_banner', '-loglevel', 'error'] as const

/**
 * The range reader answers each request with what ffmpeg is about to read, not all it asked for: on the short
 * answer ffmpeg asks again from there at once (reconnect, no delay); an error ends the run as it would.
 */
const RANGE_READER_OPTIONS = ['-reconnect', '1', '-reconnect_delay_max', '0']

function guardedInput (input: VideoInput, demuxer: Demuxer): string[] {
  // MP4/MOV may reference media in other files (dref atoms): never follow them (ffmpeg's defaults, made explicit).
  const demuxerOptions = demuxer === 'mov' ? ['-enable_drefs', '0', '-use_absolute_path', '0'] : []
  const protocolOptions = input.protocols === 'file' ? [] : RANGE_READER_OPTIONS
  return ['-protocol_whitelist', input.protocols, ...protocolOptions, ...demuxerOptions, '-f', demuxer, '-i', input.url]
}

/** The streams and format ffprobe reports; `details` adds what /api/info answers (codecs, rates, rotation). */
export function probeArgs (input: VideoInput, demuxer: Demuxer, details = false): string[] {
  const stream = details ? 'index,codec_type,codec_name,width,height,duration,avg_frame_rate,r_frame_rate:stream_side_data=rotation' : 'index,codec_type,width,height,duration'
  return [
    ...quiet,
    '-show_entries', `format=duration,nb_streams${details ? ',format_name' : ''}:stream=${stream}`,
    '-of', 'json',
    ...guardedInput(input, demuxer)
  ]
}

export interface FrameRequest {
  input: VideoInput
  demuxer: Demuxer
  seekSeconds: number
  /** Take the keyframe at or before the seek point: nothing is decoded up to the exact time. */
  keyframe?: boolean
  /** Let ffmpeg's thumbnail filter choose among this many frames after the seek point (0: take the first). */
  bestOf: number
  /** Frames the thumbnail filter holds are first shrunk to fit this many px a side (default BEST_OF_SIDE). */
  bestOfSide?: number
  threads: number
  /** The decoder refuses larger frames; the demuxer refuses more streams. */
  maxPixels: number
  maxStreams: number
  /** Print the input report (duration, streams, frame size) on stderr: it stands in for a separate ffprobe run. */
  report: boolean
  /** Shrink the frame in ffmpeg to cover this box before it is piped out (sharp does the final resize). */
  coverBox?: { width?: number, height?: number }
}

/**
 * An ffmpeg scale expression that shrinks (never enlarges) the frame just enough to still cover `box`,
 * keeping the aspect ratio: a 1080p frame for a 320 px thumbnail leaves ffmpeg at 640 px, not as 6 MB of RGB.
 */
export function coverScale ({ width, height }: { width?: number, height?: number }): string | undefined {
  const ratios = [width === undefined ? undefined : `${width}/iw`, height === undefined ? undefined : `${height}/ih`].filter(r => r !== undefined)
  if (ratios.length === 0) return undefined
  const cover = ratios.length === 1 ? ratios[0] : `max(${ratios.join(',')})`
  return `scale=w='trunc(iw*min(1,${cover}))':h=-1:flags=area`
}

/**
 * The thumbnail filter holds all the frames it compares: they are shrunk first to at most this many px a
 * side (50 x 1280 x 1280 RGB is ~250 MB at worst; full-size 1920x1920 frames took ~600 MB, 50 MP ones GBs).
 */
export const BEST_OF_SIDE = 1280

/** Shrinks (never enlarges) the frame to fit inside side x side, keeping the aspect ratio. */
export function insideScale (side: number): string {
  return `scale=w='min(iw,${side})':h='min(ih,${side})':force_original_aspect_ratio=decrease:flags=area`
}

/** One decoded frame as a binary PPM (RGB, header with its size) on stdout. */
export function frameArgs ({ input, demuxer, seekSeconds, keyframe = false, bestOf, bestOfSide = BEST_OF_SIDE, threads, maxPixels, maxStreams, report, coverBox }: FrameRequest): string[] {
  // Shrink before the thumbnail filter, which holds all the frames it compares.
  const filters = [
    coverBox === undefined ? undefined : coverScale(coverBox),
    bestOf > 0 ? `${insideScale(bestOfSide)},thumbnail=n=${bestOf}` : undefined
  ].filter(f => f !== undefined)
  return [
    '-hide_banner', '-nostats',
    '-loglevel', report ? 'info' : 'error',
    '-nostdin',
    '-threads', String(threads),
    '-max_pixels', String(maxPixels),
    '-max_streams', String(maxStreams),
    // -ss before -i: seek in the demuxer (fast), then decode only up to the exact time.
    '-ss', seekSeconds.toFixed(3),
    // The demuxer lands on the keyframe at or before the seek point; without accurate seek the output starts
    // there, and the decoder skips every frame that is not a keyframe (one keyframe in 10 s of 1080p, at
    // 8 s: 0.14 s against 0.89 s exact).
    ...(keyframe ? ['-noaccurate_seek', '-skip_frame', 'nokey'] : []),
    ...guardedInput(input, demuxer),
    '-map', '0:v:0', '-an', '-sn', '-dn',
    ...(filters.length > 0 ? ['-vf', filters.join(',')] : []),
    // Frames before the seek point keep their (negative) times: passed through, not dropped to fill a rate.
    ...(keyframe ? ['-fps_mode', 'passthrough'] : []),
    '-frames:v', '1',
    '-f', 'image2pipe', '-c:v', 'ppm', 'pipe:1'
  ]
}
