// imgproxy's processing options, one handler each, read into a draft of thumbd's options (parse.ts puts the
// layers together). The tables say what thumbd honours; imgproxy's other option names are refused by name.
import type { Fit, Position, UrlGravity, UrlOps } from '../../contract/types.ts'
import { MAX_OUTPUT_SIDE, MAX_PREVIEW_FRAMES, MAX_PREVIEW_SIDE, MAX_STORYBOARD_TILES } from '../../contract/limits.ts'

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
  /** rs:fill-down: crops to the box's aspect ratio when the source is smaller than the box (see workers/image-geometry.ts). */
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

// imgproxy's resizing types. auto: see resolveFit. fill-down only differs from fill when the source is
// smaller than the box and enlarging is off (imgproxy crops to the box's aspect ratio): options say fillDown.
export const FITS: Record<string, Fit> = { fit: 'inside', fill: 'cover', 'fill-down': 'cover', force: 'fill', auto: 'inside' }
export const GRAVITIES: Record<string, Position> = { ce: 'centre', no: 'north', so: 'south', ea: 'east', we: 'west', noea: 'northeast', nowe: 'northwest', soea: 'southeast', sowe: 'southwest', sm: 'attention' }
export const FORMATS: Record<string, UrlFormat> = { jpg: 'jpeg', jpeg: 'jpeg', png: 'png', webp: 'webp', avif: 'avif', gif: 'gif', auto: 'auto', vtt: 'vtt' }
// Go's strconv.ParseBool; a value outside it is an error here (imgproxy warns and reads false).
export const BOOLS: Record<string, boolean> = Object.fromEntries(['1', 't', 'T', 'true', 'TRUE', 'True', '0', 'f', 'F', 'false', 'FALSE', 'False'].map((v, i) => [v, i < 6]))

/** What the options say, before defaults: type is imgproxy's resizing type, background null unsets. */
export type Draft = Omit<ThumbdUrlOptions, 'fit' | 'autoFit' | 'fillDown' | 'withoutEnlargement' | 'background'> & { type?: string, enlarge?: boolean, background?: string | null }
export type Put = <K extends keyof Draft>(field: K, value: Draft[K]) => void
export type Handler = (args: string[], put: Put, name: string) => void

export function fail (name: string, why: string): never {
  throw new UrlOptionError(`option "${name}": ${why}`)
}
export const has = (table: object, key: string) => Object.hasOwn(table, key)
export function one (name: string, args: string[], max = 1): string {
  if (args.length > max) fail(name, `takes at most ${max} argument${max > 1 ? 's' : ''}`)
  return args[0]!
}
export function pick<T> (name: string, table: Record<string, T>, value: string, what: string): T {
  return has(table, value) ? table[value]! : fail(name, `${what} "${value}" is not supported (${Object.keys(table).join(', ')})`)
}
export function resizingType (name: string, value: string): string {
  pick(name, FITS, value, 'resizing type')
  return value
}
export function side (name: string, value: string): number {
  return /^\d{1,5}$/.test(value) && Number(value) <= MAX_OUTPUT_SIDE ? Number(value) : fail(name, `"${value}" is not a size from 0 (auto) to ${MAX_OUTPUT_SIDE}`)
}
/** size's arguments: width:height:enlarge:extend...; empty ones leave the setting alone, as in imgproxy. */
export function size (name: string, [width, height, enlarge, ...extend]: string[], put: Put): void {
  if (width) put('width', side(name, width))
  if (height) put('height', side(name, height))
  if (enlarge) put('enlarge', bool(name, enlarge))
  if (extend.length > 0 && extend[0] !== '') put('extend', extendOf(name, extend))
}
/** extend's arguments: extend:gravity_type:x:y (no sm, no fp). */
export function extendOf (name: string, [on = '', ...where]: string[]): UrlGravity | undefined {
  if (!bool(name, on)) return undefined
  const gravity = where.length === 0 || where[0] === '' ? { position: 'centre' as const, x: 0, y: 0 } : gravityOf(name, where)
  if ('focus' in gravity || gravity.position === 'attention') fail(name, 'extend takes a plain gravity with offsets')
  return gravity
}
/** A number for an offset or a share: pixels, or a fraction under 1 (imgproxy's rule). */
function decimal (name: string, value: string, min: number, max: number): number {
  return /^-?\d{1,5}(\.\d{1,6})?$/.test(value) && Number(value) >= min && Number(value) <= max ? Number(value) : fail(name, `"${value}" is not a number from ${min} to ${max}`)
}
/** gravity's arguments: type[:x:y] or fp:x:y. */
export function gravityOf (name: string, [type = '', x = '', y = '', ...rest]: string[]): UrlGravity {
  if (rest.length > 0) fail(name, 'takes at most 3 arguments')
  if (type === 'fp') return { focus: [decimal(name, x || '0.5', 0, 1), decimal(name, y || '0.5', 0, 1)] }
  const position = pick(name, GRAVITIES, type, 'gravity')
  if (type === 'sm' && (x || y)) fail(name, 'smart gravity takes no offsets')
  return { position, x: x ? decimal(name, x, -MAX_OUTPUT_SIDE, MAX_OUTPUT_SIDE) : 0, y: y ? decimal(name, y, -MAX_OUTPUT_SIDE, MAX_OUTPUT_SIDE) : 0 }
}
/** A positive decimal up to `max` (dpr, zoom). */
export function factor (name: string, value: string, max: number): number {
  return /^\d{1,3}(\.\d{1,6})?$/.test(value) && Number(value) > 0 && Number(value) <= max ? Number(value) : fail(name, `"${value}" is not a number over 0 and at most ${max}`)
}
/** Options thumbd always does (or never can undo): true is taken, false is refused by name. */
const always = (what: string): Handler => (args, _put, name) => { if (!bool(name, one(name, args))) fail(name, `thumbd always ${what}`) }
const QUALITY_FORMATS = { jpeg: 'jpeg', jpg: 'jpeg', png: 'png', webp: 'webp', avif: 'avif' } as const
/** skip_processing's extensions, as the sniffed source formats they name. */
const SKIPPABLE: Record<string, string> = { jpg: 'jpeg', jpeg: 'jpeg', png: 'png', webp: 'webp', avif: 'avif', gif: 'gif', heic: 'heic' }
export function bool (name: string, value: string): boolean {
  return has(BOOLS, value) ? BOOLS[value]! : fail(name, `"${value}" is not a boolean (1 or 0)`)
}
/** video_thumbnail_tile:step:columns:rows:tile_width:tile_height, as imgproxy Pro writes it; the tile height follows the video. */
export function storyboard (name: string, args: string[]): UrlStoryboard {
  const [step = '', columns = '', rows = '', tileWidth = '', tileHeight = '', ...rest] = args
  const whole = (value: string, min: number, max: number, what: string) =>
    /^\d{1,4}$/.test(value) && Number(value) >= min && Number(value) <= max ? Number(value) : fail(name, `${what} "${value}" is not a whole number from ${min} to ${max}`)
  if (tileHeight !== '' && tileHeight !== '0') fail(name, 'the tile height follows the video\'s aspect ratio: give 0')
  if (rest.some(arg => arg !== '' && arg !== '0')) fail(name, 'extend_tile, trim, fill and focus are not supported')
  const board: UrlStoryboard = { columns: whole(columns, 1, 50, 'columns'), rows: whole(rows, 1, 200, 'rows'), tileWidth: tileWidth === '' || tileWidth === '0' ? 160 : whole(tileWidth, 16, 640, 'tile_width') }
  if (board.columns * board.rows > MAX_STORYBOARD_TILES) fail(name, `at most ${MAX_STORYBOARD_TILES} tiles (columns x rows)`)
  if (board.columns * board.tileWidth > MAX_OUTPUT_SIDE) fail(name, `columns x tile_width makes a sprite over ${MAX_OUTPUT_SIDE} px wide`)
  if (step !== '' && Number(step) !== 0) {
    if (!/^\d{1,4}(\.\d{1,3})?$/.test(step) || Number(step) < 0.1) fail(name, `step "${step}" is not seconds from 0.1 to 9999 (0: columns x rows over the whole video)`)
    board.step = Number(step)
  }
  return board
}

/**
 * video_thumbnail_animation:step:delay:frames:frame_width:frame_height:extend_frame:trim:fill:focus_x:focus_y, as
 * imgproxy Pro writes it. step 0 (its default) is no animation; a negative step spreads the frames over the video.
 * A focus other than the centre is refused by name (sharp crops by gravity, not by a point).
 */
export function preview (name: string, args: string[]): UrlPreview | undefined {
  const [step = '', delay = '', frames = '', width = '', height = '', extend = '', trim = '', fill = '', focusX = '', focusY = '', ...rest] = args
  if (rest.length > 0) fail(name, 'takes at most 10 arguments')
  const whole = (value: string, min: number, max: number, what: string) =>
    /^\d{1,5}$/.test(value) && Number(value) >= min && Number(value) <= max ? Number(value) : fail(name, `${what} "${value}" is not a whole number from ${min} to ${max}`)
  if (!/^-?\d{1,5}(\.\d{1,3})?$/.test(step || '0')) fail(name, `step "${step}" is not seconds (negative: spread over the video)`)
  if (Number(step || 0) === 0) return undefined
  for (const [what, value] of [['focus_x', focusX], ['focus_y', focusY]]) {
    if (value !== '' && Number(value) !== 0.5) fail(name, `${what} "${value}" is not supported (only the centre, 0.5)`)
  }
  const flag = (value: string) => value !== '' && bool(name, value)
  const frameWidth = width === '' ? 0 : whole(width, 0, MAX_PREVIEW_SIDE, 'frame_width')
  const frameHeight = height === '' ? 0 : whole(height, 0, MAX_PREVIEW_SIDE, 'frame_height')
  if (frameWidth + frameHeight > 0 && Math.min(frameWidth || 16, frameHeight || 16) < 16) fail(name, 'frame_width and frame_height are 0 (auto) or at least 16')
  return {
    ...(Number(step) > 0 ? { step: Math.max(0.04, Number(step)) } : {}),
    delay: delay === '' || delay === '0' ? 100 : whole(delay, 20, 10000, 'delay (ms)'),
    frames: whole(frames, 1, MAX_PREVIEW_FRAMES, 'frames'),
    frameWidth: frameWidth === 0 && frameHeight === 0 ? 320 : frameWidth,
    frameHeight,
    fit: flag(fill) ? 'cover' : flag(extend) ? 'contain' : 'inside',
    trim: flag(trim)
  }
}

export function seconds (name: string, value: string, percent: boolean): string {
  const match = /^(\d{1,6}(?:\.\d{1,3})?)(p?)$/.exec(value)
  if (match === null || (match[2] && !percent)) fail(name, `"${value}" is not ${percent ? 'seconds (12.5) or a percentage (10p)' : 'seconds (12.5)'}`)
  if (match[2] && Number(match[1]) > 100) fail(name, `"${value}" is over 100%`)
  return `${Number(match[1])}${match[2] ? '%' : ''}`
}

export const HANDLERS = new Map<string, Handler>(Object.entries({
  resize: (args, put, name) => {
    one(name, args, 8)
    if (args[0]) put('type', resizingType(name, args[0]))
    size(name, args.slice(1), put)
  },
  size: (args, put, name) => {
    one(name, args, 7)
    size(name, args, put)
  },
  resizing_type: (args, put, name) => put('type', resizingType(name, one(name, args))),
  width: (args, put, name) => put('width', side(name, one(name, args))),
  height: (args, put, name) => put('height', side(name, one(name, args))),
  enlarge: (args, put, name) => put('enlarge', bool(name, one(name, args))),
  gravity: (args, put, name) => {
    const gravity = gravityOf(name, args)
    put('position', 'focus' in gravity ? 'centre' : gravity.position)
    // Offsets and focus points place the crop by numbers (workers/image-ops.ts); a plain one is sharp's position.
    put('gravity', 'focus' in gravity || gravity.x !== 0 || gravity.y !== 0 ? gravity : undefined)
  },
  crop: (args, put, name) => {
    const [width = '', height = '', ...where] = args
    const share = (value: string) => value === '' ? 0 : decimal(name, value, 0, MAX_OUTPUT_SIDE * 4)
    const gravity = where.length === 0 || where[0] === '' ? undefined : gravityOf(name, where)
    if (gravity !== undefined && !('focus' in gravity) && gravity.position === 'attention') fail(name, 'crop takes a plain gravity, with offsets, or fp')
    const crop = { width: share(width), height: share(height), ...(gravity === undefined ? {} : { gravity }) }
    put('crop', crop.width === 0 && crop.height === 0 ? undefined : crop)
  },
  rotate: (args, put, name) => {
    const value = one(name, args)
    const angle = /^-?\d{1,4}$/.test(value) && Number(value) % 90 === 0 ? ((Number(value) % 360) + 360) % 360 : fail(name, `"${value}" is not a multiple of 90`)
    put('rotate', angle === 0 ? undefined : angle as 90 | 180 | 270)
  },
  flip: (args, put, name) => {
    one(name, args, 2)
    const flip: [boolean, boolean] = [args[0] ? bool(name, args[0]) : false, args[1] ? bool(name, args[1]) : false]
    put('flip', flip[0] || flip[1] ? flip : undefined)
  },
  // sigma of a Gaussian, as libvips takes it (imgproxy passes it as is); 0: none.
  blur: (args, put, name) => put('blur', decimal(name, one(name, args), 0, 100) || undefined),
  sharpen: (args, put, name) => put('sharpen', decimal(name, one(name, args), 0, 100) || undefined),
  padding: (args, put, name) => {
    one(name, args, 4)
    const [top, right = top, bottom = top, left = right] = args.map(value => value === '' ? 0 : side(name, value))
    const padding: [number, number, number, number] = [top ?? 0, right ?? 0, bottom ?? 0, left ?? 0]
    put('padding', padding.some(Boolean) ? padding : undefined)
  },
  extend: (args, put, name) => put('extend', extendOf(name, args)),
  extend_aspect_ratio: (args, put, name) => put('extendAspect', extendOf(name, args)),
  quality: (args, put, name) => {
    const value = one(name, args)
    put('quality', /^\d{1,3}$/.test(value) && Number(value) <= 100 ? Number(value) : fail(name, `"${value}" is not a quality from 0 (default) to 100`))
  },
  format: (args, put, name) => put('format', pick(name, FORMATS, one(name, args).toLowerCase(), 'format')),
  background: (args, put, name) => {
    const [hex, g, b] = args
    if (args.length === 1 && hex === '') return put('background', null) // imgproxy: unset (e.g. a preset's)
    if (args.length === 1 && /^([0-9a-f]{3}){1,2}$/i.test(hex!)) return put('background', (hex!.length === 3 ? hex!.replace(/./g, '$&$&') : hex!).toLowerCase())
    const rgb = [hex, g, b].map(c => /^\d{1,3}$/.test(c ?? '') && Number(c) <= 255 ? Number(c).toString(16).padStart(2, '0') : undefined)
    if (args.length === 3 && !rgb.includes(undefined)) return put('background', rgb.join(''))
    fail(name, `"${args.join(':')}" is not a colour (rrggbb, rgb or r:g:b with 0-255)`)
  },
  video_thumbnail_second: (args, put, name) => put('at', seconds(name, one(name, args), false)),
  // thumbd's own: '%' would have to be written %25 in a path, so a percentage is written 10p.
  at: (args, put, name) => put('at', seconds(name, one(name, args), true)),
  frame: (args, put, name) => put('frame', pick(name, { exact: 'exact', best: 'best' } as const, one(name, args), 'frame')),
  video_thumbnail_tile: (args, put, name) => put('storyboard', storyboard(name, args)),
  video_thumbnail_animation: (args, put, name) => put('preview', preview(name, args)),
  disable_animation: (args, put, name) => put('animated', bool(name, one(name, args)) ? false : undefined),
  // Changes only the URL (and so CDN keys and the ETag), as in imgproxy.
  cachebuster: (args, put, name) => put('cacheBuster', one(name, args) || undefined),
  dpr: (args, put, name) => put('dpr', factor(name, one(name, args), 8)),
  zoom: (args, put, name) => {
    one(name, args, 2)
    const x = factor(name, args[0]!, 8)
    put('zoom', [x, args[1] === undefined || args[1] === '' ? x : factor(name, args[1], 8)])
  },
  'min-width': (args, put, name) => put('minWidth', side(name, one(name, args)) || undefined),
  'min-height': (args, put, name) => put('minHeight', side(name, one(name, args)) || undefined),
  strip_metadata: always('strips metadata (EXIF, XMP, IPTC)'),
  auto_rotate: always('rotates by the EXIF orientation'),
  expires: (args, put, name) => {
    const value = one(name, args)
    put('expires', /^\d{1,12}$/.test(value) ? Number(value) || undefined : fail(name, `"${value}" is not a Unix timestamp`))
  },
  filename: (args, put, name) => {
    one(name, args, 2)
    let text = args[0]!
    if (args[1] !== undefined && args[1] !== '' && bool(name, args[1])) text = Buffer.from(text, 'base64url').toString('utf8')
    else {
      try {
        text = decodeURIComponent(text)
      } catch {
        fail(name, 'invalid percent-encoding')
      }
    }
    // A header value: control characters and quotes would break it.
    if ([...text].some(c => c.charCodeAt(0) < 0x20 || c === '\x7f' || c === '"' || c === '\\') || text.length > 255) fail(name, 'a file name of at most 255 characters, without quotes, backslashes or control characters')
    put('filename', text || undefined)
  },
  return_attachment: (args, put, name) => put('attachment', bool(name, one(name, args)) || undefined),
  format_quality: (args, put, name) => {
    if (args.length % 2 !== 0 || args[0] === '') fail(name, 'takes pairs of format and quality (jpeg:85:webp:80)')
    const qualities: NonNullable<Draft['formatQuality']> = {}
    for (let i = 0; i < args.length; i += 2) {
      const format = pick(name, QUALITY_FORMATS, args[i]!.toLowerCase(), 'format')
      const value = args[i + 1]!
      const quality = /^\d{1,3}$/.test(value) && Number(value) <= 100 ? Number(value) : fail(name, `"${value}" is not a quality from 0 (default) to 100`)
      if (quality > 0) qualities[format] = quality
    }
    put('formatQuality', qualities)
  },
  max_bytes: (args, put, name) => {
    const value = one(name, args)
    put('maxBytes', /^\d{1,10}$/.test(value) ? Number(value) || undefined : fail(name, `"${value}" is not a number of bytes`))
  },
  skip_processing: (args, put, name) => put('skipProcessing', args.map(ext => pick(name, SKIPPABLE, ext.toLowerCase(), 'extension'))),
} satisfies Record<string, Handler>))
export const ALIASES = new Map(('rs=resize s=size rt=resizing_type w=width h=height el=enlarge g=gravity q=quality f=format ext=format ' +
  'bg=background vts=video_thumbnail_second vtt=video_thumbnail_tile vta=video_thumbnail_animation da=disable_animation cb=cachebuster pr=preset z=zoom mw=min-width mh=min-height ' +
  'c=crop rot=rotate fl=flip bl=blur sh=sharpen pd=padding ex=extend exar=extend_aspect_ratio extend_ar=extend_aspect_ratio ' +
  'sm=strip_metadata ar=auto_rotate exp=expires fn=filename att=return_attachment fq=format_quality mb=max_bytes skp=skip_processing').split(' ').map(pair => pair.split('=') as [string, string]))
// imgproxy's other options (open-source edition): named as unsupported rather than unknown.
export const UNSUPPORTED = new Set(('trim t pixelate pix watermark wm keep_copyright kcr ' +
  'strip_color_profile scp preserve_hdr ph enforce_thumbnail eth raw ' +
  'max_src_resolution msr max_src_file_size msfs max_animation_frames maf ' +
  'max_animation_frame_resolution mafr max_result_dimension mrd').split(' '))
export const canonical = (name: string) => ALIASES.get(name) ?? name
