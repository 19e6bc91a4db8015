// IMAGE_DECODER=sandbox: an image's header read by native/image-decode --info in the decoder sandbox, as sharp's
// metadata() would read it in the pool thread (the same libvips, the loader libvips finds among those not blocked,
// a HEIF at its primary picture), so that /api/info and a JPEG header the JavaScript reader leaves are parsed where
// a loader bug reaches no key. The answer is checked for shape only: it says what render() then asks the sandbox to
// decode, and the decode's own answer is checked again (still-sandboxed.ts).
import type { Metadata } from 'sharp'
import { JobError } from '../../contract/job-error.ts'
import type { JobContext, JobSource } from '../../contract/types.ts'
import { MAX_PROFILE_BYTES, runImageDecode } from './image-decode-run.ts'
import { withInputFile } from './input-file.ts'

const HEADER_BYTES = 48
const CODECS = ['jpeg', 'png', 'webp', 'gif', 'heif'] as const
/** libvips' interpretations a loader gives (vips/image.h), by sharp's names; any other is not 'srgb', all render() asks. */
const SPACES: Record<number, string> = { 1: 'b-w', 15: 'cmyk', 17: 'rgb', 22: 'srgb', 25: 'rgb16', 26: 'grey16' }

/** The fields of sharp's metadata() thumbd reads, as sharp gives them. */
export type SandboxedHeader = Pick<Metadata, 'width' | 'height' | 'pages' | 'orientation' | 'format' | 'space' | 'channels' | 'icc' | 'isPalette' | 'bitsPerSample' | 'hasAlpha'>

/** The header, or undefined where no sandboxed decoder is set up (sharp reads it here, as before). */
export async function readHeader (ref: JobSource['ref'], ctx: JobContext): Promise<SandboxedHeader | undefined> {
  const tool = ctx.settings.stills?.imageDecode
  if (tool === undefined) return undefined
  return await withInputFile(ref, ctx.settings.stills!.tempDir, async path => {
    // A profile is stored compressed (a PNG's iCCP): it may be larger than the whole file.
    return parse(await runImageDecode(tool, ['--info', '--max-pixels', String(ctx.settings.maxInputPixels)], path, HEADER_BYTES + MAX_PROFILE_BYTES, ctx))
  })
}

function parse (out: Buffer): SandboxedHeader {
  if (out.length < HEADER_BYTES || out.toString('latin1', 0, 4) !== 'IMI1') throw new JobError('MEDIA_UNREADABLE', 'the image decoder failed', 'image-decode: no header')
  const [width, height, orientation, pages, alpha, codec, space, channels, palette, bits, iccBytes] = Array.from({ length: 11 }, (_, i) => out.readUInt32LE(4 + 4 * i)) as [number, number, number, number, number, number, number, number, number, number, number]
  if (codec >= CODECS.length || out.length !== HEADER_BYTES + iccBytes) throw new JobError('MEDIA_UNREADABLE', 'the image decoder failed', 'image-decode: another size than its header says')
  return {
    width,
    height,
    format: CODECS[codec]!,
    space: (SPACES[space] ?? 'multiband') as Metadata['space'],
    channels: channels as Metadata['channels'],
    isPalette: palette === 1,
    hasAlpha: alpha === 1,
    ...(orientation > 0 ? { orientation } : {}),
    ...(pages > 0 ? { pages } : {}),
    ...(bits > 0 ? { bitsPerSample: bits } : {}),
    ...(iccBytes > 0 ? { icc: out.subarray(HEADER_BYTES, HEADER_BYTES + iccBytes) } : {})
  }
}
