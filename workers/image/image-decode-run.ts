// One run of native/image-decode (--still, --info) on its input file, in the decoder sandbox, its exit codes
// (native/image-decode.c) turned into the errors sharp's own would give in the thread, so the same statuses
// (image.ts classify). Shared by still-sandboxed.ts and header-sandboxed.ts; jpeg-sandboxed.ts's --scale hands
// some refusals to the next decoder instead, so it reads its codes itself.
import { JobError } from '../../contract/job-error.ts'
import type { JobContext } from '../../contract/types.ts'
import { runTool } from '../tools/index.ts'

const REFUSED = 2
const TOO_LARGE = 3
const UNSUPPORTED = 6
/** A profile's bytes, at most (a PNG's iCCP inflates to at most what libpng allows; this is far above any real one). */
export const MAX_PROFILE_BYTES = 64 * 2 ** 20

/** image-decode's stdout, `args` then the input `path`, or the request's error. */
export async function runImageDecode (tool: string, args: string[], path: string, maxStdoutBytes: number, ctx: JobContext): Promise<Buffer> {
  const run = await runTool(tool, [...args, path], { signal: ctx.signal, maxStdoutBytes, children: ctx.settings.children, sandbox: ctx.settings.sandbox, reads: [path], anyExitCode: true })
  const why = run.stderr.trim()
  if (run.code === UNSUPPORTED) throw new JobError('UNSUPPORTED_MEDIA', 'this image format is not supported', why)
  if (run.code === TOO_LARGE) throw new JobError('PAYLOAD_TOO_LARGE', 'the image exceeds the pixel limit', why)
  if (run.code === REFUSED) throw new JobError('MEDIA_UNREADABLE', 'the image could not be decoded', why)
  // A signal (a crash) or anything else: this request's 422, never a second decode by sharp.
  if (run.code !== 0) throw new JobError('MEDIA_UNREADABLE', 'the image decoder failed', `image-decode exited ${run.code}: ${why}`)
  return run.stdout
}
