// How render() encodes, where GET URLs ask for imgproxy's output: JPEG keeps full chroma from quality 90
// (libvips' own rule, which imgproxy keeps; sharp halves it at every quality), and max_bytes lowers a lossy
// format's quality until the result fits, in imgproxy's steps (saveImageToFitBytes).
import sharp, { type Sharp } from 'sharp'
import type { ImageOptions } from '../../contract/types.ts'

/**
 * What a flatten turns transparency into: the option's #RRGGBB (of #RRGGBBAA: a JPEG has no alpha to keep), else
 * white, as imgproxy flattens onto its background's colour. render() flattens with it, and the decoder sandbox
 * before its resize (still-sandboxed.ts).
 */
export const flattenColour = (background: string | undefined) => (background ?? '#ffffff').slice(0, 7)

/**
 * PNG of a GET URL as imgproxy saves it: a source with a palette (GIF, palette PNG) keeps one of its bit
 * depth (libimagequant), which is what keeps a GIF turned PNG small and without an alpha it does not need;
 * any other with adaptive row filters. Other PNGs: sharp's defaults, as before.
 */
export function pngOptions (options: ImageOptions, paletteBits: number | undefined) {
  if (options.url === undefined) return {}
  if (paletteBits === undefined) return { adaptiveFiltering: true }
  return { palette: true, colours: 2 ** (paletteBits > 4 ? 8 : paletteBits > 2 ? 4 : paletteBits > 1 ? 2 : 1) }
}

/**
 * Sets the encoder of options.format: PNG lossless (sharp's png({ quality }) would switch to a palette; GET
 * URLs: pngOptions), GIF without a quality (sharp's encoder, cgif with libimagequant, picks each frame's
 * palette), the lossy formats with lossyOptions.
 */
export function encode (pipeline: Sharp, options: ImageOptions, paletteBits: number | undefined): Sharp {
  if (options.format === 'png') return pipeline.png(pngOptions(options, paletteBits))
  // GET URLs: a new palette per frame as libvips (and so imgproxy) makes it; sharp's reuse of a GIF source's
  // palette halves the bytes but maps resized frames onto it (mean error 2.8 against 0.6, load/imgproxy-parity.ts).
  if (options.format === 'gif') return pipeline.gif(options.url === undefined ? {} : { reuse: false })
  return pipeline.toFormat(options.format, lossyOptions(options))
}

/** Encoder options of a lossy format. */
export function lossyOptions (options: ImageOptions, quality = options.quality) {
  return options.format === 'jpeg' ? { quality, chromaSubsampling: quality >= 90 ? '4:4:4' : '4:2:0' } : { quality }
}

/**
 * max_bytes: the pixels once, then encodes at falling quality until the result fits or the quality is 10 (the
 * smallest then). An animation is encoded from its pipeline each time (raw pixels would lose its frames).
 */
export async function encodeToFit (pipeline: Sharp, options: ImageOptions, maxBytes: number, animated = false): Promise<{ data: Buffer, info: { width: number, height: number } }> {
  const still = animated ? undefined : await pipeline.raw().toBuffer({ resolveWithObject: true })
  let info = still?.info ?? { width: 0, height: 0 }
  const encoder = (quality: number) => still === undefined
    ? pipeline.clone().toFormat(options.format, lossyOptions(options, quality))
    : sharp(still.data, { raw: { width: still.info.width, height: still.info.height, channels: still.info.channels } }).toFormat(options.format, lossyOptions(options, quality))
  let quality = options.quality
  for (;;) {
    const result = await encoder(quality).toBuffer({ resolveWithObject: true })
    const data = result.data
    if (still === undefined) info = result.info
    if (data.length <= maxBytes || quality <= 10) return { data, info }
    const over = data.length / maxBytes
    quality = Math.max(10, Math.round(quality * (over > 3 ? 0.25 : over > 1.5 ? 0.5 : 0.75)))
  }
}
