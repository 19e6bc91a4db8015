// Animated GIF/WebP through the same image steps as a still, frame by frame. sharp opens every frame as one
// tall image (pages: -1, with its page height) and already resizes, gravity-crops (CropMultiPage), pads
// (EmbedMultiPage) and extracts per frame, carrying each frame's delay and the loop count to the encoder.
// What it refuses on such an image is done here: a smart crop is chosen on the first frame and applied to
// every frame as an extract; an EXIF turn or upside-down flip (orientations 3-8), which sharp applies to the
// tall image as one (reversing the frames' order), is applied frame by frame in the pass before the resize
// (workers/image/image-ops.ts), within that pass' pixel bound, else the still first frame is kept. The bounds are
// checked from the header, before any frame is decoded.
import type { Sharp } from 'sharp'
import { JobError } from '../../contract/job-error.ts'
import { ANIMATION_PIXELS_FACTOR } from '../../contract/limits.ts'
import type { ImageOptions, JobSettings, OutputFormat } from '../../contract/types.ts'

/** Output formats that hold an animation with sharp 0.35 (its AVIF writer stores one image; its loader reads no AVIF sequence). */
export const ANIMATED_FORMATS: ReadonlySet<OutputFormat> = new Set(['webp', 'gif'])

/** What the header says about frames: how many, each frame's size, and the EXIF orientation. */
export interface FrameHeader {
  frames: number
  width: number
  height: number
  orientation: number
}

/** Refuses, from the header alone, an animation over the frame count or the pixel budget of all its frames. */
export function checkAnimationInput ({ frames, width, height }: FrameHeader, settings: JobSettings): void {
  if (frames > settings.maxAnimationFrames) {
    throw new JobError('PAYLOAD_TOO_LARGE', `an animation of ${frames} frames; at most ${settings.maxAnimationFrames} (MAX_ANIMATION_FRAMES)`)
  }
  if (frames * width * height > budget(settings)) {
    throw new JobError('PAYLOAD_TOO_LARGE', `an animation of ${frames} frames of ${width}x${height} px exceeds the pixel budget of all its frames (${budget(settings)} px)`)
  }
}

/**
 * How many frames the output keeps: all of them where the format animates and the ask allows, else 1 (the first,
 * decoded alone). An animation that must be turned frame by frame (orientsPerFrame) keeps them all only within
 * the raw pass' bound (checkAnimationOps), since the EXIF asked it, not the client.
 */
export function framesKept (header: FrameHeader, options: Pick<ImageOptions, 'format' | 'animated'>, settings: JobSettings): number {
  if (header.frames <= 1 || options.animated === false || !ANIMATED_FORMATS.has(options.format)) return 1
  return orientsPerFrame(header) && header.frames * header.width * header.height > settings.maxInputPixels ? 1 : header.frames
}

/** EXIF orientations 3-8 turn or flip the picture upside down: on a tall image of frames that reverses their order. (2 mirrors each frame in place.) */
export const orientsPerFrame = (header: Pick<FrameHeader, 'frames' | 'orientation'>) => header.frames > 1 && header.orientation >= 3

/** An animated output is bounded like its input: all its frames together within the same pixel budget. */
export function checkAnimationOutput (frames: number, width: number, height: number, settings: JobSettings): void {
  if (frames > 1 && frames * width * height > budget(settings)) {
    throw new JobError('BAD_OPTIONS', `${frames} frames of ${width}x${height} px would exceed the pixel budget of an animation (${budget(settings)} px); ask for a smaller size`)
  }
}

const budget = (settings: JobSettings) => ANIMATION_PIXELS_FACTOR * settings.maxInputPixels

/**
 * rot, c and fl of an animation hold all its frames' raw pixels at once (workers/image/image-ops.ts), not a strip at a
 * time as the resize does: they take the pixels a still's raw pass may hold (MAX_INPUT_PIXELS), not 4 times that.
 */
export function checkAnimationOps ({ frames, width, height }: FrameHeader, settings: JobSettings): void {
  if (frames > 1 && frames * width * height > settings.maxInputPixels) {
    throw new JobError('BAD_OPTIONS', `rotate, crop or flip of ${frames} frames of ${width}x${height} px holds them all; at most ${settings.maxInputPixels} px together (MAX_INPUT_PIXELS), or ask for its still (da:1)`)
  }
}

/** The box a smart crop chose on the first frame, in the coordinates of the frame scaled to cover the asked box. */
export interface CropBox {
  left: number
  top: number
  width: number
  height: number
}

/** fit=cover with a smart position (attention, entropy) crops; sharp does that on one frame only. */
export const needsFirstFrameCrop = (options: ImageOptions) =>
  options.fit === 'cover' && options.width !== undefined && options.height !== undefined &&
  (options.position === 'attention' || options.position === 'entropy')

/** Runs the smart crop on the first frame (a still pipeline): where it cut, from sharp's own report. */
export async function firstFrameCrop (firstFrame: Sharp, options: ImageOptions): Promise<CropBox> {
  const { info } = await firstFrame
    .resize({ width: options.width, height: options.height, fit: 'cover', position: options.position, withoutEnlargement: options.withoutEnlargement })
    .raw().toBuffer({ resolveWithObject: true })
  // sharp reports the crop as the offset of the scaled frame under the box: minus the box's left and top.
  return { left: -(info.cropOffsetLeft ?? 0), top: -(info.cropOffsetTop ?? 0), width: info.width, height: info.height }
}

/** Every frame scaled as the first was before its crop (cover's scale is outside's), then cut where the first was. */
export function applyCrop (pipeline: Sharp, options: ImageOptions, box: CropBox): Sharp {
  return pipeline
    .resize({ width: options.width, height: options.height, fit: 'outside', withoutEnlargement: options.withoutEnlargement })
    .extract(box)
}
