// Several outputs of one video in one task (a job's poster, storyboard, preview, hashes, info): one probe for all,
// and one decode pass for the frames they would each take by an exact seek. An exact seek decodes from the
// keyframe before its time, so 6 storyboard tiles and 8 preview frames of a 10 s video with one keyframe decode
// ~1,600 frames; the pass decodes the 250 once and hands each output the frames its own grabs would have taken.
// Each output is then made by its own job function, unchanged: grabFrame takes a frame from the pass when the pass
// decoded that very grab (frameKey: the same time, cover box, bound and best-of, through the same filter chain),
// and seeks on its own otherwise. The pass goes only as far as it decodes fewer frames than the seeks it spares
// (counted from the packets' keyframe flags, read without decoding).
import { toFailure } from '../../contract/job-error.ts'
import type { Media } from '../../contract/sniff.ts'
import type { JobContext, JobResults, SharedVideo, VideoSetMember, VideoSetResult, VideoSetTask } from '../../contract/types.ts'
import { guardedInput } from '../video/ffmpeg-args.ts'
import { frameFilters } from '../video/frame-filters.ts'
import { info } from '../video/info.ts'
import { parsePams, type RawFrame } from '../image/pam.ts'
import { perceptual } from '../hashes/perceptual.ts'
import { preview } from '../video/preview.ts'
import { storyboard } from '../video/storyboard.ts'
import { colourPath } from '../video/stream-colour.ts'
import { thumbnail } from '../video/thumbnail.ts'
import { runTool } from '../tools/index.ts'
import { frameKey } from '../video/video.ts'
import { MAX_STREAMS, probeWithLimits, type ProbeJson, type VideoInfo } from '../video/probe.ts'
import { toolAccess, videoInput, type VideoInput } from '../video/video-input.ts'
import { planFrames, type Branch } from './video-set-plan.ts'

type Member<K extends VideoSetMember['kind']> = (task: Extract<VideoSetMember, { kind: K }>, ctx: JobContext) => Promise<JobResults[K]>
const members: { [K in VideoSetMember['kind']]: Member<K> } = { thumbnail, perceptual, storyboard, preview, info }
type VideoMedia = Extract<Media, { kind: 'video' }>

/** The packets read to price the pass: the span it may cover at most. */
const SCAN_MAX_SECONDS = 300
/** A seek is an ffmpeg run of its own: its start and its reading of the input cost about this many small frames' decoding. */
const SEEK_OVERHEAD_FRAMES = 5
/** Frames a best-of branch may compare past its time: the scan covers them. */
const BEST_OF_SECONDS = 10

export async function videoSet (task: VideoSetTask, ctx: JobContext): Promise<VideoSetResult> {
  const { ref, media } = task.source
  let shared: SharedVideo | undefined
  if (media.kind === 'video') {
    try {
      const input = videoInput(ref)
      const probed = await probeWithLimits(input, media, ctx, true)
      shared = { probe: probed, frames: await sharedPass(input, media, probed, task.tasks, ctx) }
    } catch (err) {
      // Each output then meets what the probe or the pass met on its own, as its own failure.
      if (ctx.signal.aborted) throw err
    }
  }
  const results: VideoSetResult['results'] = []
  for (const member of task.tasks) {
    ctx.signal.throwIfAborted()
    try {
      const run = members[member.kind] as Member<typeof member.kind>
      results.push({ ok: true, value: await run(member, shared === undefined ? ctx : { ...ctx, shared }) })
    } catch (err) {
      if (ctx.signal.aborted) throw err
      results.push({ ok: false, error: toFailure(err) })
    }
  }
  return { results, sharedFrames: shared?.frames.size ?? 0 }
}

async function sharedPass (input: VideoInput, media: VideoMedia, { probe, info: facts }: { probe: ProbeJson, info: VideoInfo }, tasks: VideoSetMember[], ctx: JobContext): Promise<Map<string, RawFrame>> {
  const planned = planFrames(tasks, probe, facts, ctx.settings.maxAnimationFrames)
  if (planned.length === 0) return new Map()
  const end = Math.max(...planned.map(b => b.times.at(-1)! + (b.bestOf > 0 ? BEST_OF_SECONDS : 0)))
  const branches = worthIt(planned, await scanPackets(input, media, Math.min(end + 1, SCAN_MAX_SECONDS), ctx))
  if (branches.length === 0) return new Map()
  const colour = colourPath(facts.stream ?? { width: facts.width, height: facts.height })
  const run = await runTool(ctx.settings.ffmpegPath, passArgs(input, media, branches, colour, ctx), {
    signal: ctx.signal,
    // As a grab's: its bound, or the pixel limit, per frame (and the marker row).
    maxStdoutBytes: branches.reduce((sum, b) => sum + framesOf(b) * ((b.bound === undefined ? ctx.settings.maxInputPixels : b.bound.width * (b.bound.height + 1)) * 4 + 128), 0),
    children: ctx.settings.children,
    sandbox: ctx.settings.sandbox,
    ...toolAccess(input),
    anyExitCode: true
  })
  // A pass that failed spares nothing: each grab seeks on its own, and meets the failure as its own.
  return run.code === 0 ? framesByKey(run.stdout, branches) : new Map()
}

const framesOf = (b: Branch) => b.bestOf > 0 ? 1 : b.times.length

/**
 * One decode from the start, split into a chain per branch: `select` takes the first frame at or after each of
 * its times, then the grab's own filter chain (frame-filters.ts), then one marker row under the frame whose colour
 * is the branch's number. Every branch writes whole PAMs to the one pipe, flushed as written.
 */
function passArgs (input: VideoInput, media: VideoMedia, branches: Branch[], colour: ReturnType<typeof colourPath>, ctx: JobContext): string[] {
  const graph = [`[0:v:0]split=${branches.length}${branches.map((_, i) => `[s${i}]`).join('')}`, ...branches.map((b, i) => {
    const select = b.bestOf > 0 ? b.times[0]!.toFixed(3) : b.times.map((t, k) => `${t.toFixed(3)}*eq(selected_n,${k})`).join('+')
    const marker = `pad=w=iw:h=ih+1:x=0:y=0:color=0x0000${i.toString(16).padStart(2, '0')}`
    return `[s${i}]select='gte(t,${select})',${frameFilters({ coverBox: b.coverBox, bound: b.bound, bestOf: b.bestOf, colour })},${marker}[o${i}]`
  })].join(';')
  return [
    '-hide_banner', '-loglevel', 'error', '-nostdin',
    '-threads', String(ctx.settings.ffmpegThreads),
    '-max_pixels', String(ctx.settings.maxInputPixels),
    '-max_streams', String(MAX_STREAMS),
    ...(media.decoder === undefined ? [] : ['-c:v', media.decoder]),
    ...guardedInput(input, media.demuxer),
    '-filter_complex', graph,
    ...branches.flatMap((b, i) => ['-map', `[o${i}]`, '-fps_mode', 'passthrough', '-frames:v', String(framesOf(b)), '-flush_packets', '1', '-f', 'image2pipe', '-c:v', 'pam', 'pipe:1'])
  ]
}

/** The pass's frames by grab (frameKey), each without its marker row; none if any is not as planned. */
function framesByKey (stdout: Buffer, branches: Branch[]): Map<string, RawFrame> {
  const frames = new Map<string, RawFrame>()
  const taken = branches.map(() => 0)
  for (const marked of parsePams(stdout)) {
    const height = marked.height - 1
    const i = marked.data[height * marked.width * marked.channels + 2]!
    const branch = branches[i]
    const at = branch?.times[taken[i]!++]
    if (branch === undefined || at === undefined || height < 1) return new Map()
    if (branch.bound !== undefined && (marked.width > branch.bound.width || height > branch.bound.height)) return new Map()
    const data = marked.data.subarray(0, height * marked.width * marked.channels)
    frames.set(frameKey(at, branch.bestOf, branch.coverBox, branch.bound), { ...marked, data, height })
  }
  return frames
}

/** Each video packet's time and whether it is a keyframe, up to `seconds`: read by the demuxer, nothing decoded. */
async function scanPackets (input: VideoInput, media: VideoMedia, seconds: number, ctx: JobContext): Promise<Array<{ t: number, key: boolean }>> {
  const args = ['-hide_banner', '-loglevel', 'error', '-select_streams', 'v:0', '-read_intervals', `%+${seconds.toFixed(3)}`, '-show_entries', 'packet=pts_time,flags', '-of', 'csv=p=0', ...guardedInput(input, media.demuxer)]
  const { stdout } = await runTool(ctx.settings.ffprobePath, args, { signal: ctx.signal, maxStdoutBytes: 16 * 2 ** 20, children: ctx.settings.children, sandbox: ctx.settings.sandbox, ...toolAccess(input) })
  return stdout.toString('latin1').split('\n').map(line => line.split(',')).filter(([t, flags]) => flags !== undefined && Number.isFinite(Number(t))).map(([t, flags]) => ({ t: Number(t), key: flags!.startsWith('K') }))
}

/**
 * The branches up to the time where the pass (every frame once, from the start) spares the most frames the seeks
 * would decode (each from the keyframe at or before its time, plus its run's start); none if it spares none.
 */
export function worthIt (branches: Branch[], packets: Array<{ t: number, key: boolean }>): Branch[] {
  const times = packets.map(p => p.t).sort((a, b) => a - b)
  const keyframes = packets.filter(p => p.key).map(p => p.t).sort((a, b) => a - b)
  if (keyframes.length === 0) return []
  /** Frames before `t`, by binary search. */
  const before = (t: number) => {
    let [lo, hi] = [0, times.length]
    while (lo < hi) { const mid = (lo + hi) >> 1; if (times[mid]! < t - 1e-6) lo = mid + 1; else hi = mid }
    return lo
  }
  const seekCost = (t: number) => before(t) - before(keyframes.findLast(k => k <= t + 1e-6) ?? 0) + SEEK_OVERHEAD_FRAMES
  let best: { end: number, saving: number } | undefined
  for (const end of [...new Set(branches.map(b => b.times.at(-1)!))].filter(t => t <= times.at(-1)!)) {
    const within = branches.filter(b => b.times.at(-1)! <= end)
    const saving = within.reduce((sum, b) => sum + b.times.reduce((s, t) => s + seekCost(t), 0), 0) - before(end)
    if (saving > 0 && (best === undefined || saving > best.saving)) best = { end, saving }
  }
  return best === undefined ? [] : branches.filter(b => b.times.at(-1)! <= best.end)
}
