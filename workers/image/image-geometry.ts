// imgproxy's sizing rules for GET URLs (its processing/prepare.go, calcScale, and the crop to the result
// size), as one resize sharp can do: a uniform or forced scale to exact sides, or a cover crop. Where they
// differ from sharp's fits: rs:force never enlarges one side alone (640x400 into 1000x300 is 640x192),
// fill-down on a small source crops to the box's aspect ratio, dpr and zoom multiply the sides but never
// enlarge unless asked, min-width/min-height raise the scale. Written from imgproxy's documented behaviour.
import type { ImageOptions } from '../../contract/types.ts'

export type SharpResize = Pick<ImageOptions, 'width' | 'height' | 'fit' | 'withoutEnlargement'> & {
  /** For a cover crop: the size of the uniform scale before the crop (workers/image/image-ops.ts places the crop itself for offsets). */
  scaled?: [number, number]
}

/** The resize sharp does for a source of `src` display pixels; undefined: none (the source's size). */
export function urlResize ([srcW, srcH]: [number, number], options: ImageOptions): SharpResize | undefined {
  const { type, enlarge, dpr: asked, zoom: [zoomW, zoomH], minWidth, minHeight } = options.url!
  const width = options.width ?? 0
  const height = options.height ?? 0
  // Shrink factors (source / result) per side; 1 where a side is not given.
  let ws = width === 0 || width === srcW ? 1 : srcW / width
  let hs = height === 0 || height === srcH ? 1 : srcH / height
  if (ws !== 1 || hs !== 1) {
    // auto: fill when the source and the box lean the same way (square counts as landscape), else fit.
    const resolved = type !== 'auto' ? type : (srcW >= srcH) === ((width || srcW) >= (height || srcH)) ? 'fill' : 'fit'
    if (width === 0 && resolved !== 'force') ws = hs
    else if (height === 0 && resolved !== 'force') hs = ws
    else if (resolved === 'fit') ws = hs = Math.max(ws, hs)
    else if (resolved !== 'force') ws = hs = Math.min(ws, hs)
  }
  ws /= zoomW
  hs /= zoomH
  let dpr = asked
  if (!enlarge) {
    // Never enlarge: both sides by the same factor, so a forced stretch keeps its shape rather than one side.
    const least = Math.min(ws, hs)
    if (least < 1) {
      ws /= least
      hs /= least
      dpr /= least
    }
    dpr = Math.min(dpr, ws, hs)
  }
  if (minWidth !== undefined && srcW / minWidth < ws) {
    hs /= ws / (srcW / minWidth)
    ws = srcW / minWidth
  }
  if (minHeight !== undefined && srcH / minHeight < hs) {
    ws /= hs / (srcH / minHeight)
    hs = srcH / minHeight
  }
  ws = Math.min(ws / dpr, srcW)
  hs = Math.min(hs / dpr, srcH)
  const scaled = [Math.max(1, Math.round(srcW / ws)), Math.max(1, Math.round(srcH / hs))] as const
  // The result box: the asked sides times dpr and zoom (0: the scaled side), then the crop to it.
  let rw = Math.round(width * dpr * zoomW)
  let rh = Math.round(height * dpr * zoomH)
  if (type === 'fill-down') {
    const [dw, dh] = [rw / scaled[0], rh / scaled[1]]
    if (dw > dh && dw > 1) [rw, rh] = [scaled[0], Math.round(scaled[0] * rh / rw)]
    else if (dh > dw && dh > 1) [rw, rh] = [Math.round(scaled[1] * rw / rh), scaled[1]]
  }
  const crop = [rw === 0 ? scaled[0] : Math.min(rw, scaled[0]), rh === 0 ? scaled[1] : Math.min(rh, scaled[1])] as const
  if (crop[0] === scaled[0] && crop[1] === scaled[1]) {
    return scaled[0] === srcW && scaled[1] === srcH ? undefined : { width: scaled[0], height: scaled[1], fit: 'fill', withoutEnlargement: false }
  }
  // A uniform scale touching the box on one side, then a crop to it: what sharp's cover does in one step.
  return { width: crop[0], height: crop[1], fit: 'cover', withoutEnlargement: false, scaled: [scaled[0], scaled[1]] }
}
