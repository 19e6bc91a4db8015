// The ffmpeg/ffprobe command lines, built by hand (fluent-ffmpeg is archived; see README).
// Every input is read the same guarded way: one protocol (the spooled file, or http to thumbd's loopback
// range reader), demuxer forced from the sniffed type, so playlists (hls, concat), image2 patterns and
// other protocols are never auto-selected.
import type { Demuxer } from '../../contract/sniff.ts'
import type { VideoInput } from './video-input.ts'
import { frameFilters, type Bound, type Box } from './frame-filters.ts'
import type { ColourPath } from './stream-colour.ts'

const quiet = ['-hide_banner', '-loglevel', 'error'] as const

/**
 * The range reader answers each request with what ffmpeg is about to read, not all it asked for: on the short
 * answer ffmpeg asks again from there at once (reconnect, no delay); an error ends the run as it would.
 */
const RANGE_READER_OPTIONS = ['-reconnect', '1', '-reconnect_delay_max', '0']

export function guardedInput (input: VideoInput, demuxer: Demuxer): string[] {
  // MP4/MOV may reference media in other files (dref atoms): never follow them (ffmpeg's defaults, made explicit).
  const demuxerOptions = demuxer === 'mov' ? ['-enable_drefs', '0', '-use_absolute_path', '0'] : []
  const protocolOptions = input.protocols === 'file' ? [] : RANGE_READER_OPTIONS
  return ['-protocol_whitelist', input.protocols, ...protocolOptions, ...demuxerOptions, '-f', demuxer, '-i', input.url]
}

/** The streams and format ffprobe reports; `details` adds what /api/info answers (codecs, rates, rotation). */
export function probeArgs (input: VideoInput, demuxer: Demuxer, details = false): string[] {
  const colour = 'pix_fmt,color_range,color_space,color_transfer,color_primaries,sample_aspect_ratio'
  const stream = details ? `index,codec_type,codec_name,width,height,duration,avg_frame_rate,r_frame_rate,${colour}:stream_side_data=rotation` : `index,codec_type,width,height,duration,${colour}`
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
  /** A decoder forced for the video stream (libvpx-vp9 reads WebM's alpha, which ffmpeg's own vp9 decoder drops). */
  decoder?: string
  seekSeconds: number
  /** Take the keyframe at or before the seek point: nothing is decoded up to the exact time. */
  keyframe?: boolean
  /**
   * With keyframe: decode on from the keyframe to the time, but no more than this many frames after it (the
   * first decoded at or after the seek point, or the one this many after the keyframe, whichever comes
   * first): a seek whose cost is bounded however far apart the keyframes are. Only reference frames are
   * decoded (`-skip_frame noref`): nothing refers to the others, so the picture is the same, the frame at most
   * a frame or two past the time, for 40 % less CPU (x264's defaults, 1080p: 0.56 s against 0.92 s for 232 frames).
   */
  upTo?: number
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
  /** Print the time of the frame taken on stderr (showinfo, at the end of the chain): where a keyframe seek landed. */
  showTime?: boolean
  /** Shrink the frame in ffmpeg to cover this box before it is piped out (sharp does the final resize). */
  coverBox?: Box
  /** The frame is brought inside this before it is piped out, whatever size the stream switched to. */
  bound?: Bound
  /** How the frame's colours become SDR BT.709 (workers/video/stream-colour.ts). */
  colour: ColourPath
}

/**
 * An audio file's embedded picture (ID3 APIC, MP4 covr, FLAC or Ogg PICTURE: an attached-picture video
 * stream to ffmpeg), copied out as the bytes it was stored as; nothing is decoded. The report on stderr says
 * whether there was one.
 */
export function pictureArgs (input: VideoInput, demuxer: Demuxer, maxStreams: number, maxPixels: number): string[] {
  return [
    '-hide_banner', '-nostats', '-loglevel', 'info', '-nostdin',
    // The probe decodes the picture to learn its size: the decoder refuses one past the pixel limit.
    '-max_pixels', String(maxPixels),
    '-max_streams', String(maxStreams),
    ...guardedInput(input, demuxer),
    '-map', '0:v:0?', '-an', '-sn', '-dn',
    '-c', 'copy', '-frames:v', '1',
    '-f', 'image2pipe', 'pipe:1'
  ]
}

/**
 * Whether the decoder is told to skip every frame that is not a keyframe. One thread taking one frame decodes
 * the keyframe first and stops: skipping gains nothing there and costs HEVC dearly (a 4K Main 10 grab peaks
 * at 391 MB with it, 240 MB without; H.264, VP9, AV1 alike either way). Frame threads would decode the frames
 * after it in flight (4K H.264: 98 MB against 81 MB), and the thumbnail filter must compare keyframes only.
 */
function keyframeSkip (threads: number, bestOf: number): string[] {
  return threads > 1 || bestOf > 0 ? ['-skip_frame', 'nokey'] : []
}

/** One decoded frame as PAM (8-bit RGB or RGBA, header with its size) on stdout. */
export function frameArgs ({ input, demuxer, decoder, seekSeconds, keyframe = false, upTo, bestOf, bestOfSide, threads, maxPixels, maxStreams, report, showTime = false, coverBox, bound, colour }: FrameRequest): string[] {
  // Frames before the seek point have negative times (below); select counts frames from the keyframe (n = 0).
  const within = keyframe && upTo !== undefined ? `select='gte(t,0)+gte(n,${upTo})',` : ''
  return [
    '-hide_banner', '-nostats',
    '-loglevel', report || showTime ? 'info' : 'error',
    '-nostdin',
    '-threads', String(threads),
    '-max_pixels', String(maxPixels),
    '-max_streams', String(maxStreams),
    // -ss before -i: seek in the demuxer (fast), then decode only up to the exact time.
    '-ss', seekSeconds.toFixed(3),
    // The demuxer lands on the keyframe at or before the seek point; without accurate seek the output starts
    // there (one keyframe in 10 s of 1080p, at 8 s: 0.14 s against 0.89 s exact).
    ...(keyframe ? ['-noaccurate_seek', ...(upTo === undefined ? keyframeSkip(threads, bestOf) : ['-skip_frame', 'noref'])] : []),
    ...(decoder === undefined ? [] : ['-c:v', decoder]),
    ...guardedInput(input, demuxer),
    '-map', '0:v:0', '-an', '-sn', '-dn',
    '-vf', within + frameFilters({ coverBox, bound, bestOf, bestOfSide, colour }) + (showTime ? ',showinfo' : ''),
    // Frames before the seek point keep their (negative) times: passed through, not dropped to fill a rate.
    ...(keyframe ? ['-fps_mode', 'passthrough'] : []),
    '-frames:v', '1',
    '-f', 'image2pipe', '-c:v', 'pam', 'pipe:1'
  ]
}

export interface PassRequest extends Pick<FrameRequest, 'input' | 'demuxer' | 'decoder' | 'threads' | 'maxPixels' | 'maxStreams' | 'coverBox' | 'bound' | 'colour'> {
  /** Seconds between the frames taken: the first frame at or after each multiple of it, `count` frames at most. */
  interval: number
  count: number
  /** The display-matrix turn (clockwise degrees, a quarter's multiple): made after the shrink, not by ffmpeg's autorotate. */
  turned?: number
}

/**
 * One decode from the start taking the first frame at or after each multiple of `interval`, as PAMs one
 * after another on stdout: what `count` exact seeks give, each frame decoded once, by one decoder. Its
 * threads work on rows of one frame (`slice`: HEVC's wavefront rows), not on frames in flight, which would
 * hold a frame of references each (4K Main 10: 241 MB on two slice threads, 271 MB on two frame threads).
 * A turned video (a phone held upright) is turned on the shrunk frame: ffmpeg's autorotate turns every
 * decoded frame at full size first (4K Main 10: 275 MB against 251 MB, and ~15 % more CPU).
 */
export function passArgs ({ input, demuxer, decoder, threads, maxPixels, maxStreams, coverBox, bound, colour, interval, count, turned = 0 }: PassRequest): string[] {
  return [
    ...quiet,
    '-nostdin',
    '-threads', String(threads), '-thread_type', 'slice',
    '-max_pixels', String(maxPixels),
    '-max_streams', String(maxStreams),
    ...(decoder === undefined ? [] : ['-c:v', decoder]),
    ...(turned === 0 ? [] : ['-noautorotate']),
    ...guardedInput(input, demuxer),
    '-map', '0:v:0', '-an', '-sn', '-dn',
    '-vf', `select='gte(t,selected_n*${interval})',${frameFilters({ coverBox, bound, bestOf: 0, colour, turned })}`,
    '-fps_mode', 'passthrough',
    '-frames:v', String(count),
    '-f', 'image2pipe', '-c:v', 'pam', 'pipe:1'
  ]
}
