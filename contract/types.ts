// Plain data that crosses between the main thread and the workers. No classes, no functions.
import type { Media } from './sniff.ts'
import type { JobFailure } from './job-error.ts'

export type Fit = 'cover' | 'contain' | 'fill' | 'inside' | 'outside'
export type OutputFormat = 'jpeg' | 'png' | 'webp' | 'avif' | 'gif'

/** sharp's gravities, plus its smart-crop strategies. */
export type Position =
  | 'centre' | 'north' | 'northeast' | 'east' | 'southeast' | 'south' | 'southwest' | 'west' | 'northwest'
  | 'attention' | 'entropy'

export interface ImageOptions {
  width?: number
  height?: number
  fit: Fit
  position?: Position
  /** Colour for the bars of fit=contain and for flattening transparency into JPEG, e.g. "#ffffff". */
  background?: string
  format: OutputFormat
  quality: number
  withoutEnlargement: boolean
  /** GET URLs: imgproxy's sizing rules instead of sharp's (workers/image/image-geometry.ts); a background flattens every format. */
  url?: UrlGeometry
  /** GET URLs (imgproxy's max_bytes): a lossy format's quality is lowered until the result fits. */
  maxBytes?: number
  /** false: the still first frame of an animated source, even where the format could hold the animation. */
  animated?: boolean
}

/** imgproxy's resizing type and the scale factors of its URLs. */
export interface UrlGeometry {
  type: 'fit' | 'fill' | 'fill-down' | 'force' | 'auto'
  enlarge: boolean
  dpr: number
  zoom: [number, number]
  minWidth?: number
  minHeight?: number
  /** Where the crop to the result goes when a position alone does not say it: offsets or a focus point. */
  gravity?: UrlGravity
  ops?: UrlOps
}

/** imgproxy's gravity: a position with offsets (pixels, or a share of the side under 1), or a focus point (0-1 of each side). */
export type UrlGravity = { position: Position, x: number, y: number } | { focus: [number, number] }

/** imgproxy's image operations, in its processing order around the resize (workers/image/image-ops.ts). */
export interface UrlOps {
  /** Before the resize: pixels, or a share of the side under 1; 0: the whole side. */
  crop?: { width: number, height: number, gravity?: UrlGravity }
  rotate?: 90 | 180 | 270
  /** Horizontal, vertical. */
  flip?: [boolean, boolean]
  blur?: number
  sharpen?: number
  /** Top, right, bottom, left, in CSS pixels (times dpr). */
  padding?: [number, number, number, number]
  /** Extend the canvas to the asked size, or (extendAspect) to its aspect ratio. */
  extend?: UrlGravity
  extendAspect?: UrlGravity
}

/** Where in a video to take the frame: seconds from the start, or a share of the duration. */
export type FramePosition = { seconds: number } | { percent: number }

export interface VideoOptions {
  at?: FramePosition
  /** Pick the most representative of the frames near `at` (ffmpeg's thumbnail filter). */
  best: boolean
  /** keyframe: the nearest keyframe at or before `at`, without decoding up to the exact time. */
  seek?: 'exact' | 'keyframe'
}

export type SourceRef =
  | { location: 'memory', bytes: Uint8Array }
  | { location: 'file', path: string }
  /** A remote video that ffmpeg reads by range requests through thumbd's loopback reader (src/sources/range-reader.ts), at `url`, on `port`. */
  | { location: 'remote', url: string, port: number }

export interface JobSource {
  ref: SourceRef
  media: Media
  size: number
}

export interface ThumbnailTask {
  kind: 'thumbnail'
  source: JobSource
  image: ImageOptions
  video: VideoOptions
}

export interface ResizeTask {
  kind: 'resize'
  source: JobSource
  image: ImageOptions
}

/** Perceptual fingerprints of an image, or of one video frame. */
export interface PerceptualTask {
  kind: 'perceptual'
  source: JobSource
  video: VideoOptions
}

/** What a source is, from its headers: no pixel decoded. */
export interface InfoTask {
  kind: 'info'
  source: JobSource
}

/** A sprite sheet of video frames for a player's scrub previews, and their times. */
export interface StoryboardTask {
  kind: 'storyboard'
  source: JobSource
  /** Seconds between tiles, or how many tiles over the whole video (one of the two). */
  interval?: number
  count?: number
  columns: number
  tileWidth: number
  format: 'jpeg' | 'webp'
  quality: number
}

/** A short looping animation of frames spread over a video, or over a window of it (workers/video/preview.ts). */
export interface PreviewTask {
  kind: 'preview'
  source: JobSource
  frames: number
  /** Where the frames are taken: from `start` (default 0) for `duration` seconds (default: to the end). */
  start?: FramePosition
  duration?: number
  /** Seconds between frames (imgproxy's vta step); without it the frames are spread evenly over the window. */
  step?: number
  /** Without step: drop the frames a video too short for them would repeat (vta's trim). */
  trim?: boolean
  /** Each frame's box; fit as for thumbnails (inside, cover or contain; contain pads with black). */
  width?: number
  height?: number
  fit: 'inside' | 'cover' | 'contain'
  /** Milliseconds each frame shows. */
  delay: number
  format: 'webp' | 'gif'
  quality: number
}

/** The tasks of one video a video-set runs together. */
export type VideoSetMember = ThumbnailTask | PerceptualTask | InfoTask | StoryboardTask | PreviewTask

/**
 * Several outputs of one video (a job's poster, storyboard, preview, hashes, info) in one task: one probe, and one
 * decode pass for the frames they would each seek to (workers/video-set/video-set.ts). Each member's source is this source.
 */
export interface VideoSetTask {
  kind: 'video-set'
  source: JobSource
  tasks: VideoSetMember[]
}

export interface VideoSetResult {
  /** Each member's result or failure, in order: one output's failure is not the others'. */
  results: Array<{ ok: true, value: JobResults[VideoSetMember['kind']] } | { ok: false, error: JobFailure }>
  /** Frames the members took from the shared pass, instead of a seek of their own each. */
  sharedFrames: number
}

export type JobTask = ThumbnailTask | ResizeTask | PerceptualTask | InfoTask | StoryboardTask | PreviewTask | VideoSetTask

/** Settings every job needs; small, so they travel with each task and inline and pool modes stay alike. */
export interface JobSettings {
  ffmpegPath: string
  /** native/heif-decode, where built (HEIC/HEIF photos); undefined: they are refused with 415. */
  heifDecodePath?: string
  /**
   * native/image-decode, where built, and the folder its input goes to (the process's temp folder): a JPEG that
   * libturbojpeg decodes is decoded there, in the decoder sandbox, instead of in the pool thread.
   */
  imageDecode?: { path: string, tempDir: string }
  /**
   * IMAGE_DECODER=sandbox: still PNG, WebP, GIF and AVIF decoded by native/image-decode (`imageDecode`, where
   * built: sharp's own libvips), in the decoder sandbox; undefined: by sharp.
   */
  stills?: { imageDecode?: string, tempDir: string }
  ffprobePath: string
  maxInputPixels: number
  /** JPEG_DECODER: turbojpeg decodes eligible JPEGs through libturbojpeg (workers/image/jpeg-decode.ts); sharp: all through sharp. */
  jpegDecoder: 'turbojpeg' | 'sharp'
  /** JPEG_SHRINK: the decode scale of a JPEG reduced for its resize: sharp's rule (quality) or imgproxy's (workers/image/jpeg-scale.ts). */
  jpegShrink: 'auto' | 'quality' | 'imgproxy'
  maxVideoSeconds: number
  /** Frames of an animated input, or of a preview (MAX_ANIMATION_FRAMES). */
  maxAnimationFrames: number
  ffmpegThreads: number
  /** One Int32 shared by all threads: ffmpeg/ffprobe children alive right now. */
  children: SharedArrayBuffer
  sandbox: Sandbox
}

/** The decoder sandbox around every ffmpeg/ffprobe run: its settings (workers/tools/sandbox.ts gives it its forms). */
export interface Sandbox {
  /**
   * native/thumbd-sandbox-exec, where built: a tool started afresh enters the full sandbox through it
   * (native/sandbox.c: limits, no capabilities, no new privileges, Landlock, seccomp). Forked tools enter
   * the same sandbox in the zygote. Without it, util-linux's prlimit/setpriv give the limits only.
   */
  exec?: string
  prlimit?: string
  setpriv?: string
  /** The environment of every tool run (Config.toolEnv): the search path and the loader's settings, not the server's secrets. */
  env: Readonly<Record<string, string>>
  /** When native/ffmpeg-zygote.so is built and enabled, the tools are forked from a zygote (workers/tools/zygote.ts). */
  zygote?: { library: string }
  addressSpaceBytes: number
  cpuSeconds: number
}

/** Given once to each pool thread. */
export interface WorkerData {
  niceness: number
}

export interface Envelope {
  task: JobTask
  settings: JobSettings
  /** See control.ts. */
  control: SharedArrayBuffer
  /** Epoch ms after which the job is cancelled. */
  deadline: number
}

export interface ImageResult {
  data: Uint8Array
  format: OutputFormat
  width: number
  height: number
  /** Hex SHA-256 of a source the job had in memory, hashed where its bytes are (the ETag's identity; see SpoolLimits.hashInJob). */
  sourceSha256?: string
}

export interface PerceptualResult {
  /** 64-bit DCT perceptual hash, 16 hex digits; compare with the Hamming distance. */
  phash: string
  /** ThumbHash placeholder bytes, base64. */
  thumbhash: string
  /** The placeholder decoded to a small PNG data URL, ready for an <img src>. */
  thumbhashDataUrl: string
  width: number
  height: number
}

export interface StoryboardResult {
  sprite: Uint8Array
  format: 'jpeg' | 'webp'
  width: number
  height: number
  columns: number
  rows: number
  tileWidth: number
  tileHeight: number
  /** Each tile's time span (seconds) and its top-left corner in the sprite. */
  tiles: Array<{ start: number, end: number, x: number, y: number }>
}

/** What each kind of job answers. */
/** /api/info's answer. Sizes are as displayed: after EXIF orientation or the video's rotation. */
export interface MediaInfo {
  kind: 'image' | 'video' | 'audio'
  /** The sniffed format (jpeg, heic, mp4, webm ...). */
  format: string
  /** ffprobe's container name (videos). */
  container?: string
  width: number
  height: number
  /** Seconds (videos; animations have none). */
  duration?: number
  frameRate?: number
  /** Video codec, or the image's format. */
  codec?: string
  audio?: { codec: string } | null
  /** Degrees clockwise the video is turned for display (0, 90, 180, 270). */
  rotation?: number
  /** EXIF orientation (images, 1-8). */
  orientation?: number
  /** Frames (animated images). */
  pages?: number
  hasAlpha?: boolean
  /** Videos: the stored pixels' aspect ratio ("64:45"); width and height are the display size. */
  sampleAspectRatio?: string
  /** Videos: bits per component; colour tags as ffmpeg names them, when tagged; PQ or HLG. */
  bitDepth?: number
  colorTransfer?: string
  colorPrimaries?: string
  colorSpace?: string
  hdr?: boolean
  /** Audio files: whether they carry cover art (width and height are its size, 0 without). */
  hasPicture?: boolean
}

export interface JobResults {
  thumbnail: ImageResult
  resize: ImageResult
  perceptual: PerceptualResult
  info: MediaInfo
  storyboard: StoryboardResult
  preview: ImageResult
  'video-set': VideoSetResult
}

export type JobOutcome<T = JobResults[keyof JobResults]> =
  | { ok: true, value: T, workMs: number }
  | { ok: false, error: JobFailure, workMs: number }

export interface JobContext {
  settings: JobSettings
  signal: AbortSignal
  deadline: number
  /** Within a video-set (workers/video-set/video-set.ts): what its members take instead of running a tool of their own. */
  shared?: SharedVideo
}

/** A video-set's one probe and the frames of its pass, keyed by what makes a frame's pixels (workers/video/video.ts frameKey). */
export interface SharedVideo {
  /** probeWithLimits' answer, with details (workers/video/video.ts). */
  probe: unknown
  frames: ReadonlyMap<string, { data: Uint8Array, width: number, height: number, channels: 3 | 4 }>
}
