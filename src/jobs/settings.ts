// What every job is told besides its task: tool paths, limits, the decoder choice, the sandbox of its tools.
// Read once from the config and the host's media tools (src/plugins/media-tools.ts); per job, only the decoder
// threads and the CPU limit that follows from them change (src/plugins/jobs.ts).
import type { Config } from '../config.ts'
import type { MediaTools } from '../plugins/media-tools.ts'
import type { JobSettings } from '../../contract/types.ts'

/** Room for 50 MP frames, a decoder's reference frames and ffmpeg's mapped libraries; far below a runaway. */
const FFMPEG_ADDRESS_SPACE_BYTES = 4 * 2 ** 30

/**
 * RLIMIT_CPU of a tool run: the backstop should the deadline's kill ever be missed. It counts the CPU time of
 * all the tool's threads, so it grows with them (plus one for ffmpeg's demuxer and filter threads): a fixed
 * figure could kill a many-threaded decoder on a many-core host before the deadline, as a 422.
 */
export function toolCpuSeconds (jobTimeoutMs: number, decoderThreads: number): number {
  return (Math.ceil(jobTimeoutMs / 1000) + 5) * (decoderThreads + 1)
}

/** The settings every job shares; `children` counts the tools running (a SharedArrayBuffer word). */
export function jobSettings (config: Config, mediaTools: MediaTools, children: SharedArrayBuffer): JobSettings {
  return {
    ffmpegPath: config.ffmpegPath,
    heifDecodePath: mediaTools.heifDecode,
    // Opt-in (JPEG_DECODER=sandbox, or IMAGE_DECODER=sandbox for every still) while the sandboxed decode costs
    // more CPU than its 1.10x target; where it is not built, the in-thread libturbojpeg of the default
    // (media-tools.ts says so at start).
    imageDecode: config.jpegDecoder === 'sandbox' || config.imageDecoder === 'sandbox' ? mediaTools.imageDecode : undefined,
    stills: stillsOf(config, mediaTools),
    ffprobePath: config.ffprobePath,
    maxInputPixels: config.maxInputPixels,
    // sandbox takes the same JPEGs as turbojpeg (the pool thread picks them and their scale), decoded elsewhere.
    jpegDecoder: config.jpegDecoder !== 'sharp' && mediaTools.turbojpeg ? 'turbojpeg' : 'sharp',
    jpegShrink: config.jpegShrink,
    maxVideoSeconds: config.maxVideoSeconds,
    maxAnimationFrames: config.maxAnimationFrames,
    // Set per job (withDecoderThreads): one decoder thread while jobs share the cores, all of them for a job alone.
    ffmpegThreads: 1,
    children,
    sandbox: {
      ...mediaTools.sandbox,
      addressSpaceBytes: FFMPEG_ADDRESS_SPACE_BYTES,
      cpuSeconds: toolCpuSeconds(config.jobTimeoutMs, 1)
    }
  }
}

/** IMAGE_DECODER=sandbox: which still formats the decoder sandbox takes here (what is not built stays with sharp). */
function stillsOf (config: Config, { imageDecode, imageDecodeStills }: MediaTools): JobSettings['stills'] {
  if (config.imageDecoder !== 'sandbox' || imageDecode === undefined) return undefined
  return { imageDecode: imageDecodeStills ? imageDecode.path : undefined, tempDir: imageDecode.tempDir }
}

/**
 * Decoder threads for a job: a request that finds the pool idle may use every core for its decoder; under load,
 * one thread per job is the most work per CPU second (frame threads only add contention). A background step
 * (an asynchronous job's) always gets one: it started on an idle pool, but requests that come while it runs
 * must not find every core taken by its decoder (jobs-interactive: p99 x1.8 with that).
 */
export function decoderThreads (poolThreads: number, inFlight: number, background: boolean): number {
  return inFlight === 0 && !background ? poolThreads : 1
}

/** `settings` for a job whose decoder may run `ffmpegThreads` threads, its tools' CPU limit grown to match. */
export function withDecoderThreads (settings: JobSettings, ffmpegThreads: number, jobTimeoutMs: number): JobSettings {
  return { ...settings, ffmpegThreads, sandbox: { ...settings.sandbox, cpuSeconds: toolCpuSeconds(jobTimeoutMs, ffmpegThreads) } }
}
