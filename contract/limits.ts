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
 * The most pixels a storyboard's sprite holds (4096 x 4096): its tiles are held raw, 3 bytes a pixel, and the
 * sheet they are composited into again, so ~100 MB for a sprite at this bound.
 */
export const MAX_SPRITE_PIXELS = 2 ** 24

/** A storyboard sprite's longest side in its format. */
export function maxSpriteSide (format: 'jpeg' | 'webp'): number {
  return Math.min(MAX_OUTPUT_SIDE, FORMAT_MAX_SIDE[format])
}
