// Output limits, in a module of their own so the main thread can read them without loading sharp.

/** Largest output side; asks that would exceed it are refused rather than silently clamped. */
export const MAX_OUTPUT_SIDE = 8192
/** Default of MAX_ANIMATION_FRAMES (src/config.ts): frames of an animated input or of a video preview. */
export const MAX_ANIMATION_FRAMES = 1000
/** The documented maximum of MAX_ANIMATION_FRAMES. */
export const MAX_ANIMATION_FRAMES_LIMIT = 10000
/** All frames of an animation, input or output, at most this many times MAX_INPUT_PIXELS (checked from the header). */
export const ANIMATION_PIXELS_FACTOR = 4
/** Frames of a video preview, whatever MAX_ANIMATION_FRAMES allows: each is one seek. */
export const MAX_PREVIEW_FRAMES = 100
/** Largest side of a preview's frame. */
export const MAX_PREVIEW_SIDE = 1920
/** A preview's frames, all of them together, in pixels: they are held raw (RGB) until the encoder takes them. */
export const MAX_PREVIEW_PIXELS = 2 ** 25
/** Encoder quality when none is asked for (POSTed options and GET URLs alike). */
export const DEFAULT_QUALITY = 80
/** The most tiles a storyboard's sprite holds. */
export const MAX_STORYBOARD_TILES = 200
/** The largest side each sprite format can hold: libwebp's WEBP_MAX_DIMENSION, and JPEG's 16-bit sizes. */
export const FORMAT_MAX_SIDE = { webp: 16383, jpeg: 65535 } as const
/**
 * The most pixels a storyboard's sprite holds (33.5 MP, e.g. 6400 x 5242): its tiles are held raw, 3 bytes a
 * pixel, and the sheet they are composited into again. So that the default 60 tiles at the widest 640 px fit
 * 4:3, 1:1 and 4:5 video, not only 16:9: 60 tiles of 4:3 (18.4 MP) raised the server's RSS by ~220 MB, as
 * 16:9 (13.8 MP) did by ~210 MB (measured once on a loaded VM: the server's RSS sampled every 5 ms through one
 * `POST /api/storyboard?width=640` of a 2-minute 1080-line clip, +219 against +207 MB; commit cb3f189).
 */
export const MAX_SPRITE_PIXELS = 2 ** 25

/** A storyboard sprite's longest side in its format. */
export function maxSpriteSide (format: 'jpeg' | 'webp'): number {
  return Math.min(MAX_OUTPUT_SIDE, FORMAT_MAX_SIDE[format])
}

/**
 * The most scans a JPEG may have (a progressive scan bomb, libjpeg-turbo's LJT-01-003: each scan, however few
 * its bytes, makes the decoder visit every block of its components, so 481 legal scans of a flat 7000x7000 grey
 * cost 200 times the baseline JPEG). Encoders write far fewer: libjpeg's progressive script has 10 scans for
 * colour and 6 for grey, mozjpeg's searched scripts and jpegli's stay under 20. At 32, a bomb costs at most
 * about 3 times the 10-scan progressive photo of its size; libturbojpeg's own limit is 500.
 */
export const MAX_JPEG_SCANS = 32
