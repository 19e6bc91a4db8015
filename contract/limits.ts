// Output limits, in a module of their own so the main thread can read them without loading sharp.

/** Largest output side; asks that would exceed it are refused rather than silently clamped. */
export const MAX_OUTPUT_SIDE = 8192
/** Animated inputs: only the first frame is decoded, but absurd animations are refused outright. */
export const MAX_ANIMATION_FRAMES = 1000
/** Encoder quality when none is asked for (POSTed options and GET URLs alike). */
export const DEFAULT_QUALITY = 80
/** The most tiles a storyboard's sprite holds. */
export const MAX_STORYBOARD_TILES = 200
