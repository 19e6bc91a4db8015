// imgproxy's image operations for GET URLs, in its processing order (processing/pipeline.go): before the
// resize, on the auto-rotated source, rotate, crop (in the rotated frame, as imgproxy turns the crop's
// gravity with the rotation) and flip; after it, the crop to the result placed by gravity offsets or a focus
// point, blur, sharpen, extend / extend_aspect_ratio and padding. Written from imgproxy's documented behaviour.
import sharp, { type Metadata, type Sharp } from 'sharp'
import type { ImageOptions, UrlGravity, UrlOps } from '../../contract/types.ts'
import type { SharpResize } from './image-geometry.ts'
import { orientationSteps } from './jpeg-scale.ts'

/** The options that need the steps before the resize. */
export const needsBefore = (ops: UrlOps | undefined) => ops !== undefined && (ops.rotate !== undefined || ops.crop !== undefined || ops.flip !== undefined)

/** Rounds halves to even, as Go's math.RoundToEven that imgproxy centres crops with. */
const roundHalfEven = (value: number) => {
  const floor = Math.floor(value)
  return value - floor !== 0.5 ? Math.round(value) : floor % 2 === 0 ? floor : floor + 1
}

/** Whether the crop to the result is placed here (imgproxy's rounding, offsets, focus) rather than by sharp's cover: all but smart crops. */
export function placesCrop (options: ImageOptions, sizing: SharpResize): boolean {
  return options.url !== undefined && sizing.fit === 'cover' && sizing.scaled !== undefined && options.position !== 'attention' && options.position !== 'entropy'
}

/** A side of imgproxy's crop: 0 the whole side, under 1 a share of it, else pixels (at most the side). */
const cropSide = (side: number, asked: number) => asked === 0 ? side : Math.min(side, asked < 1 ? Math.max(1, Math.round(side * asked)) : Math.round(asked))

/** Where a crop of inner size goes in an outer one: imgproxy's gravity, offsets (times `scale`, under 1 a share of the side) and focus point, kept inside. */
export function place ([outerW, outerH]: [number, number], [innerW, innerH]: [number, number], gravity: UrlGravity, scale = 1): [number, number] {
  let left: number
  let top: number
  if ('focus' in gravity) {
    left = Math.round(outerW * gravity.focus[0] - innerW / 2)
    top = Math.round(outerH * gravity.focus[1] - innerH / 2)
  } else {
    const offset = (value: number, side: number) => Math.abs(value) < 1 ? Math.round(value * side) : Math.round(value * scale)
    const [x, y] = [offset(gravity.x, outerW), offset(gravity.y, outerH)]
    const p = gravity.position
    left = p.endsWith('west') ? x : p.endsWith('east') ? outerW - innerW - x : roundHalfEven((outerW - innerW + 1) / 2) + x
    top = p.startsWith('north') ? y : p.startsWith('south') ? outerH - innerH - y : roundHalfEven((outerH - innerH + 1) / 2) + y
  }
  return [Math.min(Math.max(0, left), outerW - innerW), Math.min(Math.max(0, top), outerH - innerH)]
}

/** What beforeResize hands on: the pixels (raw; an animation's frames stacked, with its page height), their frame size, and the first frame alone (for a smart crop). */
export interface BeforeResize {
  pipeline: Sharp
  size: [number, number]
  firstFrame: Sharp
}

/**
 * Rotate, crop and flip the auto-rotated source. An animation (`frames` > 1, opened with all its pages) gets
 * them frame by frame, as imgproxy does: sharp would turn or flip its frames as one tall image (their order
 * reversed, or refused), so each frame is a pass of its own, and the frames' delays and loop count are set
 * again on the result, whose raw pixels have lost them (`timing`: those of frames that came raw).
 */
export async function beforeResize (pipeline: Sharp, size: [number, number], ops: UrlOps, position: UrlGravity, frames = 1, orientation = 1, timing?: Pick<Metadata, 'delay' | 'loop'>): Promise<BeforeResize> {
  if (frames <= 1) {
    const { data, info } = await opsOnFrame(pipeline, size, ops, position)
    const still = () => sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
    return { pipeline: still(), size: [info.width, info.height], firstFrame: still() }
  }
  // `timing`: raw frames' (the sandbox's decode), which sharp's metadata() of them does not know.
  const { delay, loop } = timing ?? await pipeline.metadata()
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true })
  const pageHeight = info.height / frames
  const frameBytes = info.width * pageHeight * info.channels
  // Every frame comes out the same size: each is written into one buffer of them all (no copy to join them).
  let done: Buffer | undefined
  let out = { width: 0, height: 0, channels: info.channels }
  for (let i = 0; i < frames; i++) {
    const frame = sharp(data.subarray(i * frameBytes, (i + 1) * frameBytes), { raw: { width: info.width, height: pageHeight, channels: info.channels } })
    const result = await opsOnFrame(orientation === 1 ? frame : await oriented(frame, orientation), size, ops, position)
    out = result.info
    done ??= Buffer.allocUnsafe(result.data.length * frames)
    result.data.copy(done, i * result.data.length)
  }
  const animation = sharp(done!, { raw: { width: out.width, height: out.height * frames, channels: out.channels, pageHeight: out.height }, pages: -1 })
  // sharp keeps delay and loop across format calls (encode() sets the format after): the source's timing.
  animation.gif({ ...(delay === undefined ? {} : { delay }), ...(loop === undefined ? {} : { loop }) })
  const firstFrame = sharp(done!.subarray(0, out.width * out.height * out.channels), { raw: { width: out.width, height: out.height, channels: out.channels } })
  return { pipeline: animation, size: [out.width, out.height], firstFrame }
}

/** One frame (raw, as stored) turned as its EXIF orientation says, in a pass of its own as in opsOnFrame: sharp's own steps for it (jpeg-scale.ts). */
async function oriented (frame: Sharp, orientation: number): Promise<Sharp> {
  const { flip, flop, angle } = orientationSteps(orientation)
  const { data, info } = await frame.flip(flip).flop(flop).rotate(angle).raw().toBuffer({ resolveWithObject: true })
  return sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
}

/** One frame's rotate, crop and flip, as raw pixels. */
async function opsOnFrame (frame: Sharp, [width, height]: [number, number], ops: UrlOps, position: UrlGravity) {
  // One rotation per sharp pipeline besides the EXIF one: so the explicit one is a pass of its own.
  let image = frame
  let size: [number, number] = [width, height]
  if (ops.rotate !== undefined) {
    const { data, info } = await image.rotate(ops.rotate).raw().toBuffer({ resolveWithObject: true })
    image = sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
    size = [info.width, info.height]
  }
  if (ops.crop !== undefined) {
    const inner: [number, number] = [cropSide(size[0], ops.crop.width), cropSide(size[1], ops.crop.height)]
    const [left, top] = place(size, inner, ops.crop.gravity ?? position)
    image.extract({ left, top, width: inner[0], height: inner[1] })
  }
  if (ops.flip?.[0] === true) image.flop()
  if (ops.flip?.[1] === true) image.flip()
  return image.raw().toBuffer({ resolveWithObject: true })
}

/** After the resize: the result crop placed by offsets or focus (instead of sharp's cover), filters, extend and padding. */
/** `resized`: the size after the resize (and its crop); returns the size after extend and padding. */
export function afterResize (pipeline: Sharp, options: ImageOptions, sizing: SharpResize, resized: [number, number], background: string | { r: number, g: number, b: number, alpha: number }): [number, number] {
  const url = options.url!
  const ops = url.ops ?? {}
  const size = resized
  if (placesCrop(options, sizing)) {
    // resize() was told to fill to the scaled size; the crop to the box goes where the gravity says.
    const [left, top] = place(sizing.scaled!, size, url.gravity ?? { position: options.position ?? 'centre', x: 0, y: 0 }, url.dpr)
    pipeline.extract({ left, top, width: size[0], height: size[1] })
  }
  if (ops.blur !== undefined) pipeline.blur(Math.max(0.3, ops.blur))
  // libvips' own sharpen defaults (flat areas untouched, m2 3), which imgproxy uses; sharp's differ.
  if (ops.sharpen !== undefined) pipeline.sharpen({ sigma: Math.max(0.000001, ops.sharpen), m1: 0, m2: 3 })
  const wanted = [Math.round((options.width ?? 0) * url.dpr), Math.round((options.height ?? 0) * url.dpr)]
  let [top, right, bottom, left] = [0, 0, 0, 0]
  if (ops.extend !== undefined || ops.extendAspect !== undefined) {
    let outer: [number, number] = [...size]
    if (ops.extend !== undefined) outer = [Math.max(size[0], wanted[0]!), Math.max(size[1], wanted[1]!)]
    else if (wanted[0]! > 0 && wanted[1]! > 0) {
      const ratio = wanted[0]! / wanted[1]!
      outer = size[0] / size[1] > ratio ? [size[0], Math.round(size[0] / ratio)] : [Math.round(size[1] * ratio), size[1]]
    }
    const [x, y] = place(outer, size, (ops.extend ?? ops.extendAspect)!, url.dpr)
    ;[top, right, bottom, left] = [y, outer[0] - size[0] - x, outer[1] - size[1] - y, x]
  }
  if (ops.padding !== undefined) {
    const [t, r, b, l] = ops.padding.map(side => Math.round(side * url.dpr))
    ;[top, right, bottom, left] = [top + t!, right + r!, bottom + b!, left + l!]
  }
  if (top + right + bottom + left > 0) pipeline.extend({ top, right, bottom, left, background })
  return [resized[0] + left + right, resized[1] + top + bottom]
}
