// The thumbnail of a JPEG that libturbojpeg decoded at exactly its output size, with nothing left to do to
// its pixels (no resize, turn, crop, filter or padding, no alpha to flatten, no byte budget): encoded
// straight from the decode, JPEG by libturbojpeg and WebP by libwebp (Debian's libwebp7, which ffmpeg and
// imgproxy's libvips link too), without a sharp pipeline around the encoder. The same bytes as sharp's
// encode of those pixels (the same libjpeg settings; the same libwebp settings), for ~0.7 ms (JPEG) and
// ~2.5 ms (WebP) less CPU a thumbnail (measured, a 4 MP photo to 320 px in one thread: the encode 1.3-1.6 ->
// 0.64-0.67 ms JPEG, 9.9-10.9 -> 7.5-8.1 ms WebP; `node load/jpeg-cpu.ts --url --modes turbojpeg+imgproxy
// --format F PHOTO`, before and after in turn: 0.87-0.97 and 0.78-0.91 of the CPU). Anything else: sharp, as before.
import { lossyOptions } from './image-encode.ts'
import type { TurboDecoded } from './jpeg-decode.ts'
import type { ResizeArgs } from './jpeg-scale.ts'
import { turbojpeg } from './jpeg-turbo.ts'
import { boundOnce, copyOut, koffi } from '../../contract/native-library.ts'
import type { ImageOptions, ImageResult } from '../../contract/types.ts'

let encodes = 0
/** Thumbnails this thread encoded here (the tests check that the path was taken). */
export const directEncodes = () => encodes

/**
 * The encoded thumbnail, or undefined: sharp's pipeline makes it. `resize`: the resize render() would ask
 * of these pixels; the caller vouches that nothing follows it but the encode (and a flatten, a no-op on RGB).
 */
export function encodeDecoded ({ pixels, turned }: TurboDecoded, resize: ResizeArgs | undefined, options: ImageOptions): ImageResult | undefined {
  const { data, width, height, channels } = pixels
  if (turned || channels !== 3 || !identity(resize, width, height)) return undefined
  let encoded
  try {
    encoded = encoder(options)?.(data, width, height)
  } catch {
    // Whatever an encoder refuses (a side over WebP's 16383 px), sharp's pipeline says, as before.
    return undefined
  }
  if (encoded === undefined) return undefined
  encodes++
  return { data: encoded, format: options.format, width, height }
}

/** A resize that leaves `width` x `height` pixels as they are: every side it asks is theirs (any fit then scales by 1). */
function identity (resize: ResizeArgs | undefined, width: number, height: number): boolean {
  if (resize === undefined || (resize.width === undefined && resize.height === undefined)) return false
  return (resize.width ?? width) === width && (resize.height ?? height) === height
}

type Encode = (pixels: Buffer, width: number, height: number) => Buffer

function encoder (options: ImageOptions): Encode | undefined {
  if (options.format === 'jpeg') {
    const encode = turbojpeg()?.encode
    // lossyOptions: the chroma render() gives sharp (4:4:4 from quality 90).
    const { quality, chromaSubsampling } = lossyOptions(options)
    return encode === undefined ? undefined : (pixels, width, height) => encode(pixels, width, height, quality, chromaSubsampling as '4:4:4' | '4:2:0')
  }
  if (options.format === 'webp') {
    const encode = libwebp()
    return encode === undefined ? undefined : (pixels, width, height) => encode(pixels, width, height, options.quality)
  }
  return undefined
}

/**
 * libwebp's simple encoder: WEBP_PRESET_DEFAULT at the quality, method 4, no sharp YUV: what sharp's
 * webp({ quality }) asks of libvips' webpsave, and imgproxy's default. Throws if libwebp refuses.
 */
const libwebp = boundOnce(() => {
  const lib = koffi().load('libwebp.so.7')
  const encodeRgb = lib.func('size_t WebPEncodeRGB(const uint8_t *, int, int, int, float, _Out_ uint8_t **)')
  const free = lib.func('void WebPFree(void *)')
  return (pixels: Buffer, width: number, height: number, quality: number): Buffer => {
    const out: unknown[] = [null]
    const size = Number(encodeRgb(pixels, width, height, width * 3, quality, out))
    try {
      if (size === 0) throw new Error('libwebp: WebPEncodeRGB failed')
      return copyOut(out[0], size)
    } finally {
      if (out[0] !== null) free(out[0])
    }
  }
})
