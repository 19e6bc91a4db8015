// Dense storyboards of heavy decodes in one pass: where tiles are closer than keyframes, every exact seek
// decodes again from the keyframe before it, and each lane holds a decoder of its own. A 4K HEVC Main 10
// decoder holds ~240 MB (16-bit samples, its reference frames), so two lanes were 710 MB at peak against
// 460 MB for 8-bit 4K. One decode from the start taking the first frame at or after each tile's time gives
// the same frames, each decoded once, with one decoder (measured: 60 tiles of a 4K 10-bit clip 20-24 -> 6-10 s,
// peak 710 -> ~490 MB, `npm run bench:hdr -- --only-storyboard`; today's figures in docs/benchmarks.md, "Memory").
import { JobError } from '../../contract/job-error.ts'
import type { JobContext } from '../../contract/types.ts'
import type { Media } from '../../contract/sniff.ts'
import { passArgs } from './ffmpeg-args.ts'
import type { Bound } from './frame-filters.ts'
import { parsePams, type RawFrame } from '../image/pam.ts'
import { bitDepth, colourPath } from './stream-colour.ts'
import { runTool } from '../tools/index.ts'
import { MAX_STREAMS, type VideoInfo } from './probe.ts'
import { toolAccess, type VideoInput } from './video-input.ts'

type VideoMedia = Extract<Media, { kind: 'video' }>

/** Bytes of decoded samples above which a decoder counts as heavy: one 8-bit 4:2:0 4K frame's worth of pixels at 16 bits. */
const HEAVY_SAMPLE_BYTES = 3840 * 2160 * 2
/** Tiles closer than this take the pass: a seek then decodes about half a keyframe interval (≥ 1 s in the videos people have) per tile, more than the pass's one interval. */
export const PASS_INTERVAL = 0.5

/**
 * The pass's frames are all held until the sprite is built, where seeks hold one each: at most this many bytes
 * of them (60 tiles of 160 px: ~10 MB; 60 of 640 px: ~220 MB, which keep the seeks).
 */
export const PASS_HELD_BYTES = 64 * 2 ** 20

/**
 * Whether the storyboard takes one pass: a heavy decoder (deep samples, large frames), tiles denser than
 * PASS_INTERVAL, frames denser than tiles (the pass takes each frame once; seeks would repeat a frame
 * for tiles closer than frames, so a video of unknown or slower rate keeps the seeks), and the frames it
 * would hold (`heldBytes`) within PASS_HELD_BYTES.
 */
export function takesPass (info: VideoInfo, interval: number, frameRate: number | undefined, heldBytes: number): boolean {
  const depth = bitDepth(info.stream?.pixFmt) ?? 8
  const heavy = info.width * info.height * (depth > 8 ? 2 : 1) >= HEAVY_SAMPLE_BYTES
  return heavy && interval < PASS_INTERVAL && frameRate !== undefined && interval * frameRate >= 1 && heldBytes <= PASS_HELD_BYTES
}

/**
 * `count` frames, the first at or after each multiple of `interval`; a video that ends before the last tile
 * (or whose frames are further apart than the tiles) repeats its last frame, as a seek past the end would.
 */
export async function passFrames (input: VideoInput, media: VideoMedia, info: VideoInfo, interval: number, count: number, ctx: JobContext, coverWidth: number, bound: Bound, turned: number): Promise<RawFrame[]> {
  const colour = colourPath(info.stream ?? { width: info.width, height: info.height })
  const args = passArgs({
    input,
    demuxer: media.demuxer,
    ...(media.decoder === undefined ? {} : { decoder: media.decoder }),
    threads: ctx.settings.ffmpegThreads,
    maxPixels: ctx.settings.maxInputPixels,
    maxStreams: MAX_STREAMS,
    coverBox: { width: coverWidth },
    bound,
    colour,
    interval,
    count,
    turned
  })
  // The byte cap lets no frame past the bound be held: `count` frames of it at most, and their headers.
  const run = await runTool(ctx.settings.ffmpegPath, args, { signal: ctx.signal, maxStdoutBytes: count * (bound.width * bound.height * 4 + 128), children: ctx.settings.children, sandbox: ctx.settings.sandbox, ...toolAccess(input), anyExitCode: true })
  if (run.code !== 0) throw new JobError('MEDIA_UNREADABLE', 'the decoder rejected this media', `ffmpeg exited ${run.code}: ${run.why}`)
  const frames = parsePams(run.stdout)
  if (frames.length === 0) throw new JobError('MEDIA_UNREADABLE', 'no frame could be decoded')
  for (const frame of frames) {
    if (frame.width > bound.width || frame.height > bound.height) throw new JobError('MEDIA_UNREADABLE', 'the decoder gave a frame larger than asked', `${frame.width}x${frame.height} over ${bound.width}x${bound.height}`)
  }
  return Array.from({ length: count }, (_, i) => frames[Math.min(i, frames.length - 1)]!)
}
