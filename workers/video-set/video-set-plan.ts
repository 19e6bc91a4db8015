// Which frames a video-set's pass decodes (workers/video-set/video-set.ts): the exact-seek grabs its members would make, as
// each member plans them (the same times, cover boxes and bounds), grouped by filter chain into branches of one
// ffmpeg run. A member whose grabs it cannot foresee exactly (keyframe seeks, a storyboard's own pass, frames closer
// than the video's) is left out: it seeks on its own, as it would alone.
import { MAX_PREVIEW_PIXELS, MAX_STORYBOARD_TILES } from '../../contract/limits.ts'
import type { VideoSetMember } from '../../contract/types.ts'
import type { Bound, Box } from '../video/frame-filters.ts'
import { displayed, rate } from '../video/info.ts'
import { WORKING_SIDE } from '../hashes/perceptual.ts'
import { frameSize, frameTimes, KEYFRAME_INTERVAL as PREVIEW_KEYFRAME_INTERVAL } from '../video/preview.ts'
import { KEYFRAME_INTERVAL as STORYBOARD_KEYFRAME_INTERVAL } from '../video/storyboard.ts'
import { takesPass } from '../video/storyboard-pass.ts'
import { spriteLayout } from '../video/storyboard-layout.ts'
import { bestOfFrames, boundFor, DEFAULT_AT, PRESCALE_FACTOR, seekPoint } from '../video/video.ts'
import { type ProbeJson, type VideoInfo } from '../video/probe.ts'

/** A branch of the pass: the first frame at or after each of `times` (or best-of the frames after the one), through one chain. */
export interface Branch {
  times: number[]
  bestOf: number
  coverBox?: Box
  bound?: Bound
}

/** One grab a member would make. */
interface Grab { seconds: number, bestOf: number, coverBox?: Box, bound?: Bound }

/** grabFrame's cover box for an output size. */
const coverOf = (output: { width?: number, height?: number }): Box => ({
  width: output.width === undefined ? undefined : output.width * PRESCALE_FACTOR,
  height: output.height === undefined ? undefined : output.height * PRESCALE_FACTOR
})

export function planFrames (tasks: VideoSetMember[], probe: ProbeJson, info: VideoInfo, maxAnimationFrames: number): Branch[] {
  if (info.duration === undefined) return []
  const stream = probe.streams?.find(s => s.codec_type === 'video')
  const fps = rate(stream?.avg_frame_rate) ?? rate(stream?.r_frame_rate)
  if (fps === undefined) return []
  const grabs = tasks.flatMap(task => grabsOf(task, probe, info, maxAnimationFrames))
  const chains = Map.groupBy(grabs, g => JSON.stringify([g.bestOf > 0 ? g.seconds : 0, g.bestOf, g.coverBox, g.bound]))
  const branches: Branch[] = []
  for (const group of chains.values()) {
    const { bestOf, coverBox, bound } = group[0]!
    const times = [...new Set(group.map(g => Number(g.seconds.toFixed(3))))].sort((a, b) => a - b)
    // Two times one frame apart or less may be one frame to seeks and two to select: left to the seeks.
    if (times.some((t, i) => i > 0 && (t - times[i - 1]!) * fps < 1.5)) continue
    branches.push({ times, bestOf, ...(coverBox === undefined ? {} : { coverBox }), ...(bound === undefined ? {} : { bound }) })
  }
  return branches
}

function grabsOf (task: VideoSetMember, probe: ProbeJson, info: VideoInfo, maxAnimationFrames: number): Grab[] {
  const duration = info.duration!
  const last = Math.max(0, duration - 0.1)
  const display = displayed(probe, info)
  const still = (video: { at?: Parameters<typeof seekPoint>[0], best: boolean, seek?: string }, output: { width?: number, height?: number }): Grab[] => {
    if (video.seek === 'keyframe') return []
    const at = video.at ?? DEFAULT_AT
    const seconds = 'seconds' in at ? at.seconds : seekPoint(at, duration)
    const coverBox = coverOf(output)
    return seconds > last ? [] : [{ seconds, bestOf: video.best ? bestOfFrames(coverBox) : 0, coverBox }]
  }
  try {
    switch (task.kind) {
      case 'thumbnail': return still(task.video, task.image)
      case 'perceptual': return still(task.video, { width: WORKING_SIDE, height: WORKING_SIDE })
      case 'storyboard': {
        const interval = task.interval ?? duration / task.count!
        const count = task.count ?? Math.max(1, Math.ceil(duration / interval))
        if (count > MAX_STORYBOARD_TILES || interval >= STORYBOARD_KEYFRAME_INTERVAL) return []
        const { tileWidth } = spriteLayout(display, count, task)
        const bound = boundFor(display, { width: tileWidth }, 'crop')
        const stream = probe.streams?.find(s => s.codec_type === 'video')
        if (takesPass(info, interval, rate(stream?.avg_frame_rate) ?? rate(stream?.r_frame_rate), count * bound.width * bound.height * 4)) return []
        return Array.from({ length: count }, (_, i) => ({ seconds: Math.min(i * interval, last), bestOf: 0, coverBox: coverOf({ width: tileWidth }), bound }))
      }
      case 'preview': {
        if (task.frames > maxAnimationFrames) return []
        const times = frameTimes(task, duration)
        const [width, height] = frameSize(task, display)
        if (times.length < 2 || times[1]! - times[0]! >= PREVIEW_KEYFRAME_INTERVAL || times.length * width * height > MAX_PREVIEW_PIXELS) return []
        const bound = boundFor(display, task, task.fit === 'cover' ? 'crop' : task.fit === 'contain' ? 'inside' : 'stretch')
        return times.map(seconds => ({ seconds, bestOf: 0, coverBox: coverOf(task), bound }))
      }
      case 'info': return []
    }
  } catch {
    // A member its own options refuse (a sprite too large): it refuses them itself.
    return []
  }
}
