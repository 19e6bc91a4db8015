// The shapes imgproxy's options are read into (options.ts, parse.ts): thumbd's options of a GET URL, the
// draft the handlers fill, and the error every refusal throws. Types only (and that error): no parsing here.
import type { Fit, Position, UrlGravity, UrlOps } from '../../contract/types.ts'

export class UrlOptionError extends Error {
  override name = 'UrlOptionError'
}

/** vtt: a storyboard's WebVTT, whose cues point at its sprite (only with video_thumbnail_tile). */
export type UrlFormat = 'jpeg' | 'png' | 'webp' | 'avif' | 'gif' | 'auto' | 'vtt'

/** A storyboard instead of one frame: tiles `step` seconds apart, or (no step) columns x rows over the whole video. */
export interface UrlStoryboard {
  step?: number
  columns: number
  rows: number
  tileWidth: number
}

/** video_thumbnail_animation: a looping preview of `frames` video frames, `step` seconds apart (or spread over the video). */
export interface UrlPreview {
  /** undefined: imgproxy's negative step, the frames spread over the whole video. */
  step?: number
  delay: number
  frames: number
  /** 0: from the other side and the video's aspect ratio. */
  frameWidth: number
  frameHeight: number
  fit: 'inside' | 'cover' | 'contain'
  trim: boolean
}

export interface ThumbdUrlOptions {
  /** undefined: auto (imgproxy's 0), from the other side and the source's aspect ratio. */
  width?: number
  height?: number
  fit: Fit
  /** rs:auto with both sides: imgproxy picks fill or fit from the source's orientation; see resolveFit. */
  autoFit?: true
  position?: Position
  withoutEnlargement: boolean
  /** undefined: thumbd's default (imgproxy's q:0 means the same). */
  quality?: number
  /** undefined: the route's default; 'auto' picks from Accept. */
  format?: UrlFormat
  /** rrggbb: lower case, no '#'. */
  background?: string
  /** As thumbd's `at` takes it: seconds ("12.5") or percent ("10%"). */
  at?: string
  frame?: 'exact' | 'best'
  storyboard?: UrlStoryboard
  preview?: UrlPreview
  /** disable_animation (imgproxy Pro's da): an animated source's still first frame. */
  animated?: false
  cacheBuster?: string
  /** rs:fill-down: crops to the box's aspect ratio when the source is smaller than the box (see workers/image/image-geometry.ts). */
  fillDown?: true
  /** Device pixel ratio: multiplies the sizes, never enlarging unless asked (imgproxy's dpr). */
  dpr?: number
  /** Zoom of width and height, applied after the resize's own scale. */
  zoom?: [number, number]
  minWidth?: number
  minHeight?: number
  /** Unix seconds after which the URL is refused (imgproxy: 404). */
  expires?: number
  /** Content-Disposition's file name (without extension) and whether it is an attachment. */
  filename?: string
  attachment?: true
  /** Per-format quality (fq), over the configured defaults; q overrides it. */
  formatQuality?: Partial<Record<'jpeg' | 'png' | 'webp' | 'avif', number>>
  /** Lower the quality until the result fits (lossy formats), as imgproxy's max_bytes. */
  maxBytes?: number
  /** Source formats answered as they are, unprocessed. */
  skipProcessing?: string[]
  /** Gravity with offsets or a focus point (position holds its plain part). */
  gravity?: UrlGravity
  crop?: UrlOps['crop']
  rotate?: UrlOps['rotate']
  flip?: UrlOps['flip']
  blur?: number
  sharpen?: number
  padding?: UrlOps['padding']
  extend?: UrlGravity
  extendAspect?: UrlGravity
}

/** What the options say, before defaults: type is imgproxy's resizing type, background null unsets. */
export type Draft = Omit<ThumbdUrlOptions, 'fit' | 'autoFit' | 'fillDown' | 'withoutEnlargement' | 'background'> & { type?: string, enlarge?: boolean, background?: string | null }
export type Put = <K extends keyof Draft>(field: K, value: Draft[K]) => void
export type Handler = (args: string[], put: Put, name: string) => void
