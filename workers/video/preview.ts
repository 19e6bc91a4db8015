// Video previews: a short looping animation of N frames spread over a video (or a window of it), each scaled
// like a thumbnail, as animated WebP or GIF. One seek per frame in lanes, as storyboards do (keyframe seeks
// where frames are at least KEYFRAME_INTERVAL apart), never a decode of the whole video; remote videos are
// read by ranges through the same video input. A keyframe seek that landed on the keyframe of an earlier
// frame (keyframes further apart than the frames: x264's default GOP is 250 frames, 8.3 s at 30 fps) is made
// again exactly. The frames are joined raw, one above the other, and sharp encodes them as the pages of one
// animation.
import sharp from 'sharp'
import { JobError } from '../../contract/job-error.ts'
import { MAX_PREVIEW_PIXELS } from '../../contract/limits.ts'
import type { ImageResult, JobContext, PreviewTask } from '../../contract/types.ts'
import { classify } from '../image/image.ts'
import { displayed } from './info.ts'
import { boundFor, grabFrame, seekPoint, type GrabOptions } from './video.ts'
import { probeWithLimits } from './probe.ts'
import { videoInput } from './video-input.ts'

export const KEYFRAME_INTERVAL = 2
/**
 * A repeated frame is taken again at its time, decoding at most this many frames past its keyframe (reference
 * frames only, FrameRequest.upTo): x264's and x265's default GOP is 250 frames, so video made with the
 * encoders' defaults gets every frame at its time, and a video with one keyframe in an hour costs at most 250
 * decoded frames a preview frame, not the hour.
 */
export const MAX_EXACT_FRAMES = 250

/** Seconds of each frame: evenly over the window (the middle of each of `frames` equal parts), or `step` apart from its start. */
export function frameTimes (task: Pick<PreviewTask, 'frames' | 'start' | 'duration' | 'step' | 'trim'>, videoSeconds: number): number[] {
  const last = Math.max(0, videoSeconds - 0.1)
  const start = Math.min(last, task.start === undefined ? 0 : seekPoint(task.start, videoSeconds))
  if (task.step !== undefined) {
    const times = Array.from({ length: task.frames }, (_, i) => start + i * task.step!)
    // Past the end: the last frame again, or (trim) no frame at all.
    return task.trim === true ? times.filter(t => t <= last) : times.map(t => Math.min(t, last))
  }
  const window = Math.max(0, Math.min(task.duration ?? Infinity, videoSeconds - start))
  return Array.from({ length: task.frames }, (_, i) => Math.min(last, start + ((i + 0.5) * window) / task.frames))
}

/** The size of every frame: the box for cover and contain, else the video's aspect inside the box; even sides. */
export function frameSize (task: Pick<PreviewTask, 'width' | 'height' | 'fit'>, video: { width: number, height: number }): [number, number] {
  const even = (n: number) => Math.max(2, Math.round(n / 2) * 2)
  const { width, height } = task
  if (width !== undefined && height !== undefined && task.fit !== 'inside') return [width, height]
  const scale = width !== undefined && height !== undefined
    ? Math.min(width / video.width, height / video.height)
    : width !== undefined ? width / video.width : height! / video.height
  return [even(video.width * scale), even(video.height * scale)]
}

export async function preview (task: PreviewTask, ctx: JobContext): Promise<ImageResult> {
  const { ref, media } = task.source
  if (media.kind !== 'video') throw new JobError('UNSUPPORTED_MEDIA', 'previews are made of videos')
  if (task.frames > ctx.settings.maxAnimationFrames) {
    throw new JobError('BAD_OPTIONS', `a preview of ${task.frames} frames; at most ${ctx.settings.maxAnimationFrames} (MAX_ANIMATION_FRAMES)`)
  }
  const input = videoInput(ref)
  const { probe, info } = await probeWithLimits(input, media, ctx, true)
  if (info.duration === undefined) throw new JobError('MEDIA_UNREADABLE', 'the video does not say how long it is')
  const times = frameTimes(task, info.duration)
  if (times.length === 0) throw new JobError('BAD_OPTIONS', 'the video ends before the first frame of the preview')
  // Sized from the probe as shown (turned, square pixels), before any frame is grabbed; every frame takes it.
  const display = displayed(probe, info)
  const [width, height] = frameSize(task, display)
  if (times.length * width * height > MAX_PREVIEW_PIXELS) {
    throw new JobError('BAD_OPTIONS', `${times.length} frames of ${width}x${height} px; a preview holds at most ${MAX_PREVIEW_PIXELS} px in all`)
  }
  // A stream that changes shape after its probe is brought inside the frame's size in ffmpeg, as the resize
  // below would (cover keeps the centre, contain all of it, inside stretches it to the probe's aspect).
  const bound = boundFor(display, task, task.fit === 'cover' ? 'crop' : task.fit === 'contain' ? 'inside' : 'stretch')
  const seek: GrabOptions['seek'] = times.length < 2 || times[1]! - times[0]! >= KEYFRAME_INTERVAL ? 'keyframe' : 'exact'
  const pieces: Buffer[] = []
  /** Where each keyframe seek landed (the keyframe's time, as ffmpeg said it). */
  const landed: Array<number | undefined> = []
  const grab = async (i: number, laneCtx: JobContext, again = false) => {
    const how = again ? { exactWithin: MAX_EXACT_FRAMES } : { seek, showTime: seek === 'keyframe' }
    const frame = await grabFrame(input, media, { at: { seconds: times[i]! }, best: false, ...how }, laneCtx, { width: task.width, height: task.height }, bound)
    if (!again) landed[i] = frame.seconds
    pieces[i] = await sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: frame.channels } })
      .resize(width, height, { fit: task.fit === 'inside' ? 'fill' : task.fit, background: '#000000' })
      .removeAlpha().raw().toBuffer()
  }
  try {
    await inLanes(times.map((_, i) => i), ctx, (i, laneCtx) => grab(i, laneCtx))
    // Two keyframe seeks that landed on one keyframe decoded the same frame: the later one is taken again at
    // its exact time. At most one more seek per frame, each decoding at most MAX_EXACT_FRAMES.
    if (seek === 'keyframe') await inLanes(repeats(landed, times), ctx, (i, laneCtx) => grab(i, laneCtx, true))
    const animation = sharp(Buffer.concat(pieces), { raw: { width, height: height * pieces.length, channels: 3, pageHeight: height } })
    const options = { delay: pieces.map(() => task.delay), loop: 0 }
    const data = await (task.format === 'gif' ? animation.gif(options) : animation.webp({ ...options, quality: task.quality })).toBuffer()
    return { data, format: task.format, width, height }
  } catch (err) {
    throw classify(err)
  }
}

/**
 * The frames (their indexes) whose keyframe seek landed where an earlier frame's did, though asked at another
 * time: a frame asked twice (a step past the end repeats the last) is meant to repeat. Pictures are not
 * compared: the same picture at two times (a slide, black between scenes, a loop) is not a repeated seek.
 */
export function repeats (landed: Array<number | undefined>, times: number[]): number[] {
  const first = new Map<number, number>()
  const again: number[] = []
  landed.forEach((at, i) => {
    if (at === undefined) return
    const earlier = first.get(at)
    if (earlier === undefined) first.set(at, i)
    else if (times[earlier] !== times[i]) again.push(i)
  })
  return again
}

/**
 * Runs `work` on each index, as storyboards do: the job's decoder threads become lanes of one-thread grabs.
 * Every lane has stopped (its tool with it) before this settles, even when one failed.
 */
async function inLanes (indexes: number[], ctx: JobContext, work: (i: number, laneCtx: JobContext) => Promise<void>): Promise<void> {
  const lanes = Math.max(1, Math.min(ctx.settings.ffmpegThreads, indexes.length))
  const laneCtx = lanes === 1 ? ctx : { ...ctx, settings: { ...ctx.settings, ffmpegThreads: 1 } }
  let next = 0
  const stop = { failed: false }
  const lane = async () => {
    for (let k = next++; k < indexes.length && !stop.failed; k = next++) {
      ctx.signal.throwIfAborted()
      await work(indexes[k]!, laneCtx)
    }
  }
  const settled = await Promise.allSettled(Array.from({ length: lanes }, () => lane().catch(err => { stop.failed = true; throw err })))
  const failure = settled.find(s => s.status === 'rejected')
  if (failure !== undefined) throw failure.reason
}
