// Debian's Little CMS 2 (package liblcms2-2), called through koffi as jpeg-turbo.ts calls libturbojpeg: an
// RGB profile's pixels converted to sRGB after a reduced decode, on 1/16-1/64 of the photo's pixels, where
// libvips converts the whole decode (measured in one thread, a 4 MP Adobe RGB photo at 320 px: 14.1-14.3 ms
// against 25.2-33.0 ms for sharp's conversion; docs/architecture.md, "Why it is fast"). Relative colorimetric, no black
// point compensation: what libvips' icc_transform (imgproxy's conversion) does by default. A transform is
// built once per profile in each thread (~3 ms) and kept, a few at most. A host without the library gets
// undefined, and the photo goes through sharp's own conversion.
import { createHash } from 'node:crypto'
import { boundOnce, koffi } from '../../contract/native-library.ts'

/** lcms2.h: TYPE_RGB_8 = COLORSPACE_SH(PT_RGB) | CHANNELS_SH(3) | BYTES_SH(1). */
const TYPE_RGB_8 = (4 << 16) | (3 << 3) | 1
const INTENT_RELATIVE_COLORIMETRIC = 1
/** cmsSigRgbData, 'RGB ': the only input colour space taken (CMYK, grey, Lab stay with libvips). */
const SIG_RGB = 0x52474220
/** Transforms kept per thread: photos come from a few cameras and phones; more are built again. */
const KEPT = 8

/** Converts `pixels` (8-bit RGB, in place) from the profile it was built for to sRGB. */
export type ToSrgb = (pixels: Buffer) => void

interface Lcms { toSrgb: (icc: Uint8Array) => ToSrgb | undefined }

const lcms = boundOnce(bind)

/** A converter from the RGB profile `icc` to sRGB, or undefined: no lcms here, or a profile it refuses. */
export function srgbFrom (icc: Uint8Array): ToSrgb | undefined {
  return lcms()?.toSrgb(icc)
}

function bind (): Lcms {
  const lib = koffi().load('liblcms2.so.2')
  const openProfile = lib.func('void *cmsOpenProfileFromMem(const uint8_t *, uint32_t)')
  const srgbProfile = lib.func('void *cmsCreate_sRGBProfile()')
  const colourSpace = lib.func('uint32_t cmsGetColorSpace(void *)')
  const closeProfile = lib.func('int cmsCloseProfile(void *)')
  const createTransform = lib.func('void *cmsCreateTransform(void *, uint32_t, void *, uint32_t, uint32_t, uint32_t)')
  const doTransform = lib.func('void cmsDoTransform(void *, const uint8_t *, uint8_t *, uint32_t)')
  const deleteTransform = lib.func('void cmsDeleteTransform(void *)')
  // lcms' error handler (the default one) only logs through a callback that is not set: nothing to silence.
  const isNull = (handle: unknown) => handle === null || handle === 0n
  const kept = new Map<string, unknown>()

  function build (icc: Uint8Array): unknown {
    const input = openProfile(icc, icc.length)
    if (isNull(input)) return undefined
    const output = srgbProfile()
    try {
      if (colourSpace(input) !== SIG_RGB) return undefined
      const transform = createTransform(input, TYPE_RGB_8, output, TYPE_RGB_8, INTENT_RELATIVE_COLORIMETRIC, 0)
      return isNull(transform) ? undefined : transform
    } finally {
      // A transform holds what it needs of its profiles.
      closeProfile(input)
      closeProfile(output)
    }
  }

  return {
    toSrgb (icc) {
      const key = createHash('sha256').update(icc).digest('base64')
      let transform = kept.get(key)
      if (transform === undefined) {
        transform = build(icc)
        if (transform === undefined) return undefined
        if (kept.size >= KEPT) {
          const [oldest, handle] = kept.entries().next().value!
          kept.delete(oldest)
          deleteTransform(handle)
        }
        kept.set(key, transform)
      }
      const handle = transform
      // lcms converts in place when input and output have the same format.
      return pixels => doTransform(handle, pixels, pixels, pixels.length / 3)
    }
  }
}
