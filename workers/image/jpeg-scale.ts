// At which scale a JPEG is decoded for a resize, and how its EXIF orientation is applied to pixels that no
// longer carry it. 'quality' is sharp 0.35's own rule (src/pipeline.cc: the shrink-on-load one step lower
// whenever the reduction's integer part equals the factor), so the thumbnail is the one sharp makes;
// 'imgproxy' is imgproxy's (the largest of 8, 4, 2 not above the reduction): up to twice fewer pixels
// decoded, a softer thumbnail (docs/benchmarks.md, "Photos against imgproxy", its "Decode scale" note).
import type { Fit } from '../../contract/types.ts'

export type JpegShrinkRule = 'quality' | 'imgproxy'

/** The resize render() asks sharp for, in display (oriented) pixels. */
export interface ResizeArgs {
  width?: number
  height?: number
  fit?: Fit
  withoutEnlargement?: boolean
}

/** sharp's ResolveShrink (src/common.cc): the reduction per axis of a resize from `width` x `height`. */
export function resolveShrink (width: number, height: number, { width: tw, height: th, fit = 'cover', withoutEnlargement }: ResizeArgs): [number, number] {
  let h = 1
  let v = 1
  if (tw !== undefined && th !== undefined) {
    h = width / tw
    v = height / th
    if (fit === 'cover' || fit === 'outside') h = v = Math.min(h, v)
    else if (fit === 'contain' || fit === 'inside') h = v = Math.max(h, v)
  } else if (tw !== undefined) {
    h = width / tw
    if (fit !== 'fill') v = h
  } else if (th !== undefined) {
    v = height / th
    if (fit !== 'fill') h = v
  }
  if (withoutEnlargement === true) [h, v] = [Math.max(1, h), Math.max(1, v)]
  return [Math.min(h, width), Math.min(v, height)]
}

/** EXIF orientations 5-8 turn the picture a quarter: the stored frame's sides are the display's swapped. */
export const quarterTurned = (orientation: number) => orientation >= 5 && orientation <= 8

/**
 * The resize in the stored frame: sharp swaps the asked sides for a quarter turn (its autoRotation). With one
 * side asked every fit but fill scales both sides alike and crops nothing; but sharp would crop or pad to the
 * other side, taken unturned, so the swapped resize says inside.
 */
export function storedResize<T extends ResizeArgs> (resize: T, orientation: number): T {
  if (!quarterTurned(orientation)) return resize
  const oneSide = resize.width === undefined || resize.height === undefined
  return { ...resize, width: resize.height, height: resize.width, fit: oneSide && resize.fit !== 'fill' ? 'inside' : resize.fit }
}

/** The JPEG's decode scale (1, 2, 4 or 8) for a resize of its `stored` pixels; 1 when there is none. */
export function jpegShrink ([width, height]: [number, number], orientation: number, resize: ResizeArgs, rule: JpegShrinkRule): number {
  const stored = storedResize(resize, orientation)
  if (stored.width === undefined && stored.height === undefined) return 1
  const shrink = Math.min(...resolveShrink(width, height, stored))
  const factor = shrink >= 8 ? 8 : shrink >= 4 ? 4 : shrink >= 2 ? 2 : 1
  // sharp: "lower shrink-on-load for known libjpeg rounding errors".
  return rule === 'quality' && factor > 1 && Math.trunc(shrink) === factor ? factor / 2 : factor
}

/**
 * Whether pixels without their orientation can be resized and then turned exactly as sharp does it for
 * the JPEG: sharp resizes in the stored frame and turns after, and so can an explicit rotate after the
 * resize, but it then crops or pads (cover, contain) to the unturned sides. A quarter turn with both sides
 * and one of those fits stays with sharp's own path.
 */
export function orientable (orientation: number, resize: ResizeArgs): boolean {
  if (!quarterTurned(orientation)) return true
  const both = resize.width !== undefined && resize.height !== undefined
  return !both || (resize.fit !== 'cover' && resize.fit !== 'contain')
}

/** sharp's EXIF turn as the explicit steps it applies after the resize (vertical flip, then rotation). */
export function orientationSteps (orientation: number): { flip: boolean, flop: boolean, angle: 0 | 90 | 180 | 270 } {
  switch (orientation) {
    case 2: return { flip: false, flop: true, angle: 0 }
    case 3: return { flip: false, flop: false, angle: 180 }
    // A half turn and a mirror: a vertical flip.
    case 4: return { flip: true, flop: false, angle: 0 }
    // A quarter turn then a mirror: the same as a vertical flip then the turn (sharp flips before it rotates).
    case 5: return { flip: true, flop: false, angle: 90 }
    case 6: return { flip: false, flop: false, angle: 90 }
    case 7: return { flip: true, flop: false, angle: 270 }
    case 8: return { flip: false, flop: false, angle: 270 }
    default: return { flip: false, flop: false, angle: 0 }
  }
}
