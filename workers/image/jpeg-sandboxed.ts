// A JPEG decoded by native/image-decode in the decoder sandbox (Debian's libturbojpeg with the thread's flags, as
// in-process, at the scale the pool thread chose; sharp's own libvips where it is missing), so that a bug in the
// decoder reaches a process that holds no key and no other photo, and a decode past the deadline or of a client that
// left is killed, not waited for: the pool thread only awaits a pipe.
// Why a C tool and not a sandboxed Node+sharp child: the tool forks from its zygote with libvips loaded and its
// classes initialised (fork, sandbox and exit ~0.5-0.75 ms of CPU), where a Node child costs ~40 ms and ~40 MB to
// start, a zygote of Node cannot fork (threads), and the pool thread resizes and encodes the trusted pixels anyway.
import { JobError } from '../../contract/job-error.ts'
import type { JobContext } from '../../contract/types.ts'
import { runTool } from '../tools/index.ts'
import { withInputFile } from './input-file.ts'

/** image-decode's exit codes (native/image-decode.c). */
const REFUSED = 2
const OTHER_SIZE = 3
const NOT_TAKEN = 5
const HEADER_BYTES = 16

export interface Decoded { data: Buffer, width: number, height: number, channels: 1 | 3 }

/**
 * The pixels, or undefined where this path does not take the JPEG (another size than its header said, CMYK, 12-bit,
 * or anything libturbojpeg refuses: a sampling it cannot name, a libjpeg warning), as libturbojpeg's path in the thread
 * hands it on: the next decoder (sharp here, or with IMAGE_DECODER=sandbox libvips in the sandbox) gives the 200 or
 * the 4xx sharp gives. Where libturbojpeg is missing in the decoder, libvips' refusal is that of the next decoder too:
 * with IMAGE_DECODER=sandbox, a 422 at once, not a second decode. A decoder that died of a signal (a crash) is a 422,
 * not handed to sharp.
 */
export async function decodeSandboxed (bytes: Uint8Array, size: [number, number], channels: 1 | 3, shrink: number, ctx: JobContext): Promise<Decoded | undefined> {
  const tool = ctx.settings.imageDecode!
  return await withInputFile({ location: 'memory', bytes }, tool.tempDir, async path => {
    const [w, h] = [Math.ceil(size[0] / shrink), Math.ceil(size[1] / shrink)]
    const run = await runTool(tool.path, ['--scale', String(shrink), '--size', String(size[0]), String(size[1]), '--channels', String(channels), path], {
      signal: ctx.signal,
      maxStdoutBytes: HEADER_BYTES + w * h * channels,
      children: ctx.settings.children,
      sandbox: ctx.settings.sandbox,
      reads: [path],
      anyExitCode: true
    })
    if (run.code === OTHER_SIZE || run.code === NOT_TAKEN) return undefined
    if (run.code === REFUSED && ctx.settings.stills?.imageDecode !== undefined) throw new JobError('MEDIA_UNREADABLE', 'the image could not be decoded', run.stderr.trim())
    if (run.code === REFUSED) return undefined
    if (run.code !== 0) throw new JobError('MEDIA_UNREADABLE', 'the image decoder failed', `image-decode exited ${run.code}: ${run.stderr.trim()}`)
    const out = run.stdout
    if (out.length !== HEADER_BYTES + w * h * channels || out.toString('latin1', 0, 4) !== 'TJD1' || out.readUInt32LE(4) !== w || out.readUInt32LE(8) !== h || out.readUInt32LE(12) !== channels) {
      throw new JobError('MEDIA_UNREADABLE', 'the image decoder failed', 'image-decode answered another size')
    }
    return { data: out.subarray(HEADER_BYTES), width: w, height: h, channels }
  })
}
