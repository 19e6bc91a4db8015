// Storyboards: N frames of a video, at a fixed interval or a fixed count, as one sprite sheet, for a player's
// scrub previews. One seek per tile, never a decode of the whole video: a 1-hour video costs what 60 frame
// grabs cost. Where tiles are at least KEYFRAME_INTERVAL apart each takes the keyframe at or before its
// time (no decoding up to it); closer tiles take the exact frame, as keyframes would repeat. Close tiles of a
// heavy decoder (4K 10-bit) are one decode pass instead (workers/video/storyboard-pass.ts).
import sharp, { type OverlayOptions } from 'sharp'
import { JobError } from '../../contract/job-error.ts'
import { MAX_STORYBOARD_TILES as MAX_TILES } from '../../contract/limits.ts'
import type { JobContext, StoryboardResult, StoryboardTask } from '../../contract/types.ts'
import { classify } from '../image/image.ts'
import { displayed, rate } from './info.ts'
import { spriteLayout } from './storyboard-layout.ts'
import { passFrames, takesPass } from './storyboard-pass.ts'
import { boundFor, grabFrame, PRESCALE_FACTOR } from './video.ts'
import { probeWithLimits } from './probe.ts'
import { videoInput } from './video-input.ts'

export const KEYFRAME_INTERVAL = 2

export async function storyboard (task: StoryboardTask, ctx: JobContext): Promise<StoryboardResult> {
  const { ref, media } = task.source
  if (media.kind !== 'video') throw new JobError('UNSUPPORTED_MEDIA', 'storyboards are made of videos')
  const input = videoInput(ref)
  const { probe, info } = await probeWithLimits(input, media, ctx, true)
  const { duration } = info
  if (duration === undefined) throw new JobError('MEDIA_UNREADABLE', 'the video does not say how long it is')
  const interval = task.interval ?? duration / task.count!
  // A count is taken as given (duration / (duration / n) may round up past n); an interval's count is bounded here.
  const count = task.count ?? Math.max(1, Math.ceil(duration / interval))
  if (count > MAX_TILES) throw new JobError('BAD_OPTIONS', `an interval of ${interval} s makes ${count} tiles; at most ${MAX_TILES}`)
  // Sized from the probe, before any frame is grabbed: a sheet too large is refused now, not once built.
  const display = displayed(probe, info)
  const { tileWidth, tileHeight, ...sheet } = spriteLayout(display, count, task)
  const seek = interval >= KEYFRAME_INTERVAL ? 'keyframe' : 'exact'
  // The layout holds only if every frame has the probe's shape: a stream that grows after it (4096x16, then
  // 1280x16384) is cut to the tile's centre in ffmpeg, as the cover resize below would, not piped whole.
  const bound = boundFor(display, { width: tileWidth }, 'crop')
  const tiles: StoryboardResult['tiles'] = []
  const pieces: OverlayOptions[] = []
  // The job's decoder threads become lanes of one-thread grabs: one keyframe gains little from frame
  // threads, two grabs at once use two cores (a 60-tile storyboard of a remote hour 7.8 -> 5.2 s on a loaded VM,
  // `npm run bench:ranges`; today's figure in docs/benchmarks.md, "Remote videos").
  // Dense tiles of a heavy decode (4K 10-bit) are one pass of one decoder instead (workers/video/storyboard-pass.ts).
  const stream = probe.streams?.find(s => s.codec_type === 'video')
  const pass = seek === 'exact' && takesPass(info, interval, rate(stream?.avg_frame_rate) ?? rate(stream?.r_frame_rate), count * bound.width * bound.height * 4)
    ? await passFrames(input, media, info, interval, count, ctx, tileWidth * PRESCALE_FACTOR, bound, display.rotation).catch(err => { throw classify(err) })
    : undefined
  const lanes = pass !== undefined ? 1 : Math.max(1, Math.min(ctx.settings.ffmpegThreads, count))
  const laneCtx = lanes === 1 ? ctx : { ...ctx, settings: { ...ctx.settings, ffmpegThreads: 1 } }
  let next = 0
  /** Set by the first lane that fails: the others stop at their next tile. */
  const stop = { failed: false }
  const lane = async () => {
    for (let i = next++; i < count && !stop.failed; i = next++) {
      ctx.signal.throwIfAborted()
      const start = i * interval
      const frame = pass?.[i] ?? await grabFrame(input, media, { at: { seconds: Math.min(start, Math.max(0, duration - 0.1)) }, best: false, seek }, laneCtx, { width: tileWidth }, bound)
      const tile = await sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: frame.channels } })
        .resize(tileWidth, tileHeight, { fit: 'cover' }).flatten().raw().toBuffer()
      const [x, y] = [(i % task.columns) * tileWidth, Math.floor(i / task.columns) * tileHeight]
      pieces[i] = { input: tile, raw: { width: tileWidth, height: tileHeight, channels: 3 }, left: x, top: y }
      tiles[i] = { start: round(start), end: round(Math.min(duration, start + interval)), x, y }
    }
  }
  try {
    // Every lane has stopped (its tool with it) before the job answers, even when one failed.
    const settled = await Promise.allSettled(Array.from({ length: lanes }, () => lane().catch(err => { stop.failed = true; throw err })))
    const failure = settled.find(s => s.status === 'rejected')
    if (failure !== undefined) throw failure.reason
    const sprite = await sharp({ create: { width: sheet.width, height: sheet.height, channels: 3, background: '#000000' } })
      .composite(pieces).toFormat(task.format, { quality: task.quality }).toBuffer()
    return { sprite, format: task.format, ...sheet, tileWidth, tileHeight, tiles }
  } catch (err) {
    throw classify(err)
  }
}

const round = (seconds: number) => Math.round(seconds * 1000) / 1000
