// The filter chain that turns a decoded video frame into what sharp takes: square pixels, shrunk to about the
// size wanted, SDR BT.709, 8 bits RGB or RGBA. One small function per step; frameFilters composes them.
// Every step that costs per pixel comes after the shrink: a 4K HDR frame for a 320 px thumbnail is
// tone-mapped at 640 px, not at 3840 (and, where the caller asks, turned there too).
import type { ColourPath, Matrix } from './stream-colour.ts'

export interface Box { width?: number, height?: number }

/** A sample aspect ratio outside these bounds is refused (a lying 1000:1); in the chain it is clipped to them. */
export const MAX_SAR = 4
const SAR = `clip(sar,${1 / MAX_SAR},${MAX_SAR})`

/**
 * The display size of the (already rotated) frame as scale expressions: the sample aspect ratio applied by
 * narrowing or flattening, never by enlarging, so the frame never has more pixels than were decoded.
 */
export function squarePixels (): { w: string, h: string } {
  return { w: `iw*min(1,${SAR})`, h: `ih/max(1,${SAR})` }
}

/**
 * One scale filter to the display size, shrunk (never enlarged) just enough to still cover `box`: a 1080p
 * frame for a 320 px thumbnail leaves ffmpeg at 640 px, not as 6 MB of RGB. Pixels are square after it.
 */
export function shrink (display: { w: string, h: string }, box: Box = {}): string {
  const ratios = [box.width === undefined ? undefined : `${box.width}/(${display.w})`, box.height === undefined ? undefined : `${box.height}/(${display.h})`].filter(r => r !== undefined)
  const cover = ratios.length === 0 ? '1' : ratios.length === 1 ? `min(1,${ratios[0]})` : `min(1,max(${ratios.join(',')}))`
  return `scale=w='max(1,trunc(${display.w}*${cover}))':h='max(1,trunc(${display.h}*${cover}))':flags=area,setsar=1`
}

/**
 * The most a grab may pipe out, whatever the stream does after it was probed (a video that probes 4096x16
 * and then sends 1280x16384 frames). `crop` keeps the centre (what a cover resize keeps), `stretch` scales
 * each side down on its own (for a frame stretched to its box after), `inside` scales down keeping the aspect.
 */
export interface Bound { width: number, height: number, fit: 'crop' | 'stretch' | 'inside' }

/**
 * The frame brought inside `bound`; a frame already inside passes untouched (so ordinary video is unchanged).
 * exact: crop otherwise rounds the sides of subsampled frames down to even, so a 1-row frame became 0.
 */
export function bound ({ width, height, fit }: Bound): string {
  const [w, h] = [`min(iw,${width})`, `min(ih,${height})`]
  if (fit === 'crop') return `crop=w='${w}':h='${h}':exact=1`
  return `scale=w='${w}':h='${h}'${fit === 'inside' ? ':force_original_aspect_ratio=decrease' : ''}:flags=area`
}

/**
 * The thumbnail filter holds all the frames it compares: they are shrunk first to at most this many px a
 * side (50 x 1280 x 1280 RGB is ~250 MB at worst; full-size 1920x1920 frames took ~600 MB, 50 MP ones GBs).
 */
export const BEST_OF_SIDE = 1280

/** Shrinks (never enlarges) the frame to fit inside side x side, keeping the aspect ratio. */
export function insideScale (side: number): string {
  return `scale=w='min(iw,${side})':h='min(ih,${side})':force_original_aspect_ratio=decrease:flags=area`
}

/** ffmpeg's thumbnail filter picks the most representative of n frames, each first shrunk to fit side. */
export function bestOf (n: number, side = BEST_OF_SIDE): string {
  return `${insideScale(side)},thumbnail=n=${n}`
}

/**
 * The container's display-matrix turn (clockwise degrees, as info.ts' displayed() reports it) made by the
 * filters ffmpeg's autorotate would insert at the start of the chain, here at its end: at the start, on a 4K
 * 10-bit frame, that is a 25 MB turned copy per decoded frame (measured on a turned 4K HLG clip's storyboard:
 * the decoder 243 -> 219 MB, user CPU 8.4-8.8 -> 7.1-7.7 s; `npm run bench:hdr -- --only-storyboard` runs it);
 * at the end it turns the small 8-bit RGB frame, and no step before it sees a size or format it made.
 */
export function turn (clockwise: number): string | undefined {
  return clockwise === 90 ? 'transpose=clock' : clockwise === 180 ? 'hflip,vflip' : clockwise === 270 ? 'transpose=cclock' : undefined
}

const ZIMG_MATRIX: Record<Matrix, string> = { bt601: '470bg', bt709: '709', bt2020: '2020_ncl' }
/** BT.2408's reference white: SDR white sits at 203 cd/m² in PQ and at 75 % of HLG (on a 1000 cd/m² display). */
const REFERENCE_WHITE = 203
/** HDR10 is mostly mastered to 1000 cd/m², HLG's nominal peak: 1000/203 of SDR white is rolled off to white. */
const HDR_PEAK = (1000 / REFERENCE_WHITE).toFixed(2)
/** mobius keeps everything below 0.7 of SDR white as it is and rolls off above (chosen on rendered frames: docs/video-colour.md). */
const TONEMAP = `tonemap=tonemap=mobius:param=0.7:peak=${HDR_PEAK}:desat=0`

/**
 * What zscale is given: zimg refuses a subsampled frame whose sides are not multiples of its subsampling
 * ("code 1027: image dimensions must be divisible by subsampling factor"), and the shrink, a bound or the
 * stream itself (VP9 and AV1 code odd sizes) can make a 4:2:0 side odd: a 720x1280 HLG frame shrunk to cover
 * 640 px is 640x1137. Without subsampling any size passes, and the exact size keeps the output's aspect. The
 * shrink's scale makes this format in the same pass (after the shrink, so at about twice the output's size);
 * 16 bits hold every depth, RGB stays RGB (a YUV format would read it through a matrix zscale is not told).
 */
export const ZSCALE_INPUT = 'format=pix_fmts=yuv444p16le|gbrp16le'

/**
 * HDR (PQ, HLG) tone-mapped to SDR BT.709, or BT.2020 SDR converted to BT.709, by zscale; undefined when the
 * frame is already SDR BT.601/709 (to8bit's matrix does it). Input tags are given, not read from the frame,
 * so contradictory or missing tags resolve as colourPath decided.
 */
export function toSdr ({ dynamic, matrix, range }: ColourPath): string | undefined {
  const input = `${ZSCALE_INPUT},zscale=min=${ZIMG_MATRIX[matrix]}:pin=2020:rin=${range === 'pc' ? 'full' : 'limited'}`
  if (dynamic === 'bt2020') return `${input}:tin=709:p=709:t=709,format=gbrp`
  if (dynamic === 'sdr') return undefined
  const curve = dynamic === 'pq' ? 'smpte2084' : 'arib-std-b67'
  return `${input}:tin=${curve}:t=linear:npl=${REFERENCE_WHITE},format=gbrpf32le,zscale=p=709,${TONEMAP},zscale=t=709,format=gbrp`
}

/** 8 bits RGB, or RGBA where the frame has alpha (ffmpeg picks the one that loses nothing), YUV read with `matrix`. */
export function to8bit (matrix: Matrix | undefined): string {
  const formats = 'format=pix_fmts=rgba|rgb24'
  return matrix === undefined ? formats : `scale=in_color_matrix=${matrix},${formats}`
}

export interface FrameFilterOptions {
  /** The frame is shrunk to cover this box (sharp does the final resize). */
  coverBox?: Box
  /** The frame is brought inside this after the shrink, whatever size the stream switched to. */
  bound?: Bound
  /** Frames the thumbnail filter compares (0: take the first). */
  bestOf: number
  bestOfSide?: number
  colour: ColourPath
  /**
   * The turn ffmpeg was told not to make (`-noautorotate`), made last, on the 8-bit frame; `coverBox` and
   * `bound` stay those of the frame as shown. 0 (the default): ffmpeg turned the frame before the chain, if at all.
   */
  turned?: number
}

/** The one place the steps are composed, in the order that keeps the expensive ones small. */
export function frameFilters ({ coverBox, bound: limit, bestOf: n, bestOfSide, colour, turned = 0 }: FrameFilterOptions): string {
  const sdr = toSdr(colour)
  // Before a quarter turn the frame's width is its height as shown.
  const sideways = turned === 90 || turned === 270
  return [
    shrink(squarePixels(), sideways && coverBox !== undefined ? { width: coverBox.height, height: coverBox.width } : coverBox),
    limit === undefined ? undefined : bound(sideways ? { ...limit, width: limit.height, height: limit.width } : limit),
    n > 0 ? bestOf(n, bestOfSide) : undefined,
    sdr,
    to8bit(sdr === undefined ? colour.matrix : undefined),
    turn(turned)
  ].filter(f => f !== undefined).join(',')
}
