// imgproxy's processing options, one handler each, read into a draft of thumbd's options (parse.ts puts the
// layers together). The tables say what thumbd honours; imgproxy's other option names are refused by name.
import { MAX_OUTPUT_SIDE } from '../../contract/limits.ts'
import { bool, decimal, extendOf, factor, fail, FORMATS, gravityOf, one, pick, resizingType, side, size } from './arguments.ts'
import type { Draft, Handler } from './option-types.ts'
import { preview, seconds, storyboard } from './video-arguments.ts'

/** Options thumbd always does (or never can undo): true is taken, false is refused by name. */
const always = (what: string): Handler => (args, _put, name) => { if (!bool(name, one(name, args))) fail(name, `thumbd always ${what}`) }
const QUALITY_FORMATS = { jpeg: 'jpeg', jpg: 'jpeg', png: 'png', webp: 'webp', avif: 'avif' } as const
/** skip_processing's extensions, as the sniffed source formats they name. */
const SKIPPABLE: Record<string, string> = { jpg: 'jpeg', jpeg: 'jpeg', png: 'png', webp: 'webp', avif: 'avif', gif: 'gif', heic: 'heic' }

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
    // Offsets and focus points place the crop by numbers (workers/image/image-ops.ts); a plain one is sharp's position.
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
