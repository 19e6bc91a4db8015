// HEIC/HEIF photos (phones' default): prebuilt sharp reads HEIF with AV1 inside only, so the HEVC ones are
// decoded by native/heif-decode (libheif), run like ffmpeg: in the decoder sandbox, reading only its input,
// killed on cancel. It writes a PNG (display-oriented, with the photo's colour profile) that sharp takes from
// there, through the same steps as any other image.
import { JobError } from '../../contract/job-error.ts'
import type { ImageOptions, JobContext, JobSource } from '../../contract/types.ts'
import { runTool } from '../tools/index.ts'

/** heif-decode's exit codes (see native/heif-decode.c). */
const NOT_HEIF = 2
const TOO_LARGE = 3
/** The largest side heif-decode's --fit takes. */
const MAX_FIT_SIDE = 65535

/**
 * The resize the decoded image is for. Given, heif-decode decodes the photo's embedded thumbnail, where it has
 * one, instead of the primary image when the resize makes the same image from it without enlarging it (12 MP
 * with a 320x240 thumbnail: the default thumbnail costs ~40x less CPU). withoutEnlargement need not be passed:
 * a thumbnail is only taken when the output is no larger than it, so no larger than the primary either.
 */
export type HeifResize = Pick<ImageOptions, 'width' | 'height' | 'fit'>

export async function decodeHeif ({ ref }: JobSource, ctx: JobContext, resize?: HeifResize): Promise<Uint8Array> {
  const tool = ctx.settings.heifDecodePath
  if (tool === undefined) throw new JobError('UNSUPPORTED_MEDIA', 'HEIC/HEIF is not available on this host (native/heif-decode is not built)')
  if (ref.location !== 'file') throw new JobError('INTERNAL', 'internal error', 'HEIF sources must be spooled to a file')
  const run = await runTool(tool, ['--max-pixels', String(ctx.settings.maxInputPixels), ...fitArgs(resize), '--threads', String(ctx.settings.ffmpegThreads), ref.path], {
    signal: ctx.signal,
    // RGBA at the pixel limit, stored (deflate level 0), plus the PNG's own bytes.
    maxStdoutBytes: ctx.settings.maxInputPixels * 4 + 2 ** 20,
    children: ctx.settings.children,
    sandbox: ctx.settings.sandbox,
    reads: [ref.path],
    anyExitCode: true
  })
  if (run.code === 0) return run.stdout
  if (run.code === TOO_LARGE) throw new JobError('PAYLOAD_TOO_LARGE', 'the image exceeds the pixel limit', run.stderr.trim())
  if (run.code === NOT_HEIF) throw new JobError('MEDIA_UNREADABLE', 'the HEIF decoder rejected this image', run.stderr.trim())
  throw new JobError('MEDIA_UNREADABLE', 'the HEIF decoder failed', `heif-decode exited ${run.code}: ${run.stderr.trim()}`)
}

/** heif-decode's --fit MODE WIDTH HEIGHT (0: a side not given); none without a size: the primary is decoded. */
function fitArgs (resize: HeifResize | undefined): string[] {
  const { width = 0, height = 0, fit = 'cover' } = resize ?? {}
  const side = (n: number) => Number.isInteger(n) && n >= 0 && n <= MAX_FIT_SIDE
  if (width === 0 && height === 0) return []
  return side(width) && side(height) ? ['--fit', fit, String(width), String(height)] : []
}
