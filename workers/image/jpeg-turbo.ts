// Debian's libturbojpeg (package libturbojpeg0), called through koffi: a JPEG decoded by libjpeg-turbo's
// scaled IDCT straight into a buffer, without libvips' per-scanline work (0.77-0.95 of the CPU of sharp's decode
// at the same scale: docs/benchmarks.md, "Photos against imgproxy", its "Decode scale" note).
// The TurboJPEG 2 API, which libturbojpeg 2.1 (Debian 12) and 3.x both export. Loaded once per thread; a host
// without the library (or without koffi's prebuilt binary) gets undefined, and images go through sharp.
import { boundOnce, copyOut, koffi } from '../../contract/native-library.ts'

// TurboJPEG 2 constants (turbojpeg.h).
const TJPF_RGB = 0
const TJPF_GRAY = 6
/** A warning (truncated or corrupt data) fails the decode, as sharp's failOn: 'warning' does. */
const TJFLAG_STOPONWARNING = 8192
/**
 * More than 500 progressive scans fail the decode. Not what bounds a scan bomb's cost (481 scans of a flat 7000x7000
 * grey cost 200 times its baseline JPEG): workers/image/jpeg-scans.ts refuses more than MAX_JPEG_SCANS before any decode.
 */
const TJFLAG_LIMITSCANS = 32768
/** The encode's DCT: libjpeg's accurate one, as libvips (so sharp) encodes; TurboJPEG's default below q96 is the fast one. */
const TJFLAG_ACCURATEDCT = 4096
const TJSAMP_444 = 0
const TJSAMP_420 = 2
export const TJCS = { RGB: 0, YCbCr: 1, GRAY: 2, CMYK: 3, YCCK: 4 } as const

export interface JpegHeader {
  width: number
  height: number
  /** TJSAMP_*: 0 4:4:4, 1 4:2:2, 2 4:2:0, 3 grey, 4 4:4:0, 5 4:1:1; -1 unknown. */
  subsampling: number
  /** TJCS_*. */
  colourspace: number
}

export interface TurboJpeg {
  header: (bytes: Uint8Array) => JpegHeader
  /** The picture at 1/`shrink` (1, 2, 4 or 8), RGB or grey; throws on any libjpeg warning or error. */
  decode: (bytes: Uint8Array, header: JpegHeader, shrink: number) => { data: Buffer, width: number, height: number, channels: 1 | 3 }
  /**
   * 8-bit RGB pixels as a baseline JPEG, Huffman tables optimised, no JFIF segment: the bytes sharp's
   * jpeg({ quality, chromaSubsampling }) writes of them (its libjpeg settings); undefined where TurboJPEG 2
   * would not optimise them (below).
   */
  encode?: (pixels: Uint8Array, width: number, height: number, quality: number, chroma: '4:4:4' | '4:2:0') => Buffer
}

/** libturbojpeg in this thread, or undefined where it (or koffi) does not load. */
export const turbojpeg = boundOnce(bind)

/** Why libturbojpeg does not load here, or undefined if it does: said at start (src/plugins/media-tools.ts). */
export function turbojpegMissing (): string | undefined {
  try {
    bind()
    return undefined
  } catch (err) {
    return err instanceof Error ? err.message : String(err)
  }
}

function bind (): TurboJpeg {
  const lib = koffi().load('libturbojpeg.so.0')
  const init = lib.func('void *tjInitDecompress()')
  const readHeader = lib.func('int tjDecompressHeader3(void *, const uint8_t *, unsigned long, _Out_ int *, _Out_ int *, _Out_ int *, _Out_ int *)')
  const decompress = lib.func('int tjDecompress2(void *, const uint8_t *, unsigned long, uint8_t *, int, int, int, int, int)')
  const errorText = lib.func('const char *tjGetErrorStr2(void *)')
  const destroy = lib.func('int tjDestroy(void *)')
  const initCompress = lib.func('void *tjInitCompress()')
  const compress = lib.func('int tjCompress2(void *, const uint8_t *, int, int, int, int, _Inout_ uint8_t **, _Inout_ unsigned long *, int, int, int)')
  const free = lib.func('void tjFree(uint8_t *)')
  // A decompressor per call (microseconds): a pool thread that ends leaves none behind.
  const withHandle = <T>(what: string, use: (handle: unknown) => number, result: () => T, create = init): T => {
    const handle = create()
    if (handle === null || handle === 0n) throw new Error(`libturbojpeg ${what}: no handle`)
    try {
      // Any -1, a warning included (TJERR_WARNING): sharp's failOn: 'warning' refuses those too.
      if (use(handle) !== 0) throw new Error(`libturbojpeg ${what}: ${String(errorText(handle))}`)
      return result()
    } finally {
      destroy(handle)
    }
  }
  return {
    header (bytes) {
      const [w, h, s, c] = [[0], [0], [0], [0]]
      return withHandle('header', handle => readHeader(handle, bytes, bytes.length, w, h, s, c), () => ({ width: w[0]!, height: h[0]!, subsampling: s[0]!, colourspace: c[0]! }))
    },
    decode (bytes, header, shrink) {
      // TJSCALED: libjpeg's scaled size, the same as libvips' jpegload with shrink.
      const width = Math.ceil(header.width / shrink)
      const height = Math.ceil(header.height / shrink)
      const channels = header.colourspace === TJCS.GRAY ? 1 : 3
      const data = Buffer.allocUnsafe(width * height * channels)
      const flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS
      return withHandle('decode', handle => decompress(handle, bytes, bytes.length, data, width, 0, height, channels === 1 ? TJPF_GRAY : TJPF_RGB, flags), () => ({ data, width, height, channels: channels as 1 | 3 }))
    },
    encode: optimises() ? encode : undefined
  }

  function encode (pixels: Uint8Array, width: number, height: number, quality: number, chroma: '4:4:4' | '4:2:0'): Buffer {
    const out: unknown[] = [null]
    const size = [0]
    // Freed whether the encode succeeded or not: a failing tjCompress2 may have allocated it already.
    try {
      return withHandle('encode', handle => compress(handle, pixels, width, 0, height, TJPF_RGB, out, size, chroma === '4:4:4' ? TJSAMP_444 : TJSAMP_420, quality, TJFLAG_ACCURATEDCT),
        () => withoutJfif(copyOut(out[0], size[0]!)), initCompress)
    } finally {
      if (out[0] !== null) free(out[0])
    }
  }
}

/**
 * TurboJPEG 2 has no parameter for Huffman optimisation (sharp's optimiseCoding, on by default): it reads
 * TJ_OPTIMIZE=1 from the process environment on each encode. It is set there at start, before any thread
 * (a thread setting it later would race others' getenv); without it the encode stays with sharp.
 */
function optimises (): boolean {
  const getenv = koffi().load('libc.so.6').func('const char *getenv(const char *)')
  return getenv('TJ_OPTIMIZE') === '1'
}

/** The JPEG without its JFIF APP0 segment (libjpeg writes one; sharp, from raw pixels, none): sharp's bytes. */
function withoutJfif (jpeg: Buffer): Buffer {
  const jfif = jpeg[2] === 0xff && jpeg[3] === 0xe0 && jpeg.toString('latin1', 6, 11) === 'JFIF\0'
  return jfif ? Buffer.concat([jpeg.subarray(0, 2), jpeg.subarray(4 + jpeg.readUInt16BE(4))]) : jpeg
}
