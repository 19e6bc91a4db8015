// Animations for tests, made at test time: GIFs written byte by byte (so a header can declare what no encoder
// would write: 100 000 frames, a canvas at the pixel limit, any delay), animated WebPs by sharp, and WebPs
// whose frames lie about where they sit.
import sharp from 'sharp'

const u16 = (n: number) => [n & 0xff, (n >> 8) & 0xff]

export interface GifSpec {
  /** The canvas (logical screen): the size every decoder gives each frame. */
  width: number
  height: number
  frames: number
  /** Centiseconds per frame, cycled; default 10 (100 ms). */
  delays?: number[]
  /** What each frame's descriptor declares (default 1x1): its data is still one pixel, so a large one is truncated. */
  frameWidth?: number
  frameHeight?: number
}

/**
 * A GIF whose every frame is one pixel at the canvas' top-left corner, of colour index i % 2 (black, white).
 * The frames cost 23 bytes each, so a tiny file can declare any number of them, of any size.
 */
export function gifOf ({ width, height, frames, delays = [10], frameWidth = 1, frameHeight = 1 }: GifSpec): Buffer {
  const head = [
    ...Buffer.from('GIF89a', 'latin1'), ...u16(width), ...u16(height), 0x80, 0, 0, // global table of 2 colours
    0, 0, 0, 255, 255, 255,
    0x21, 0xff, 0x0b, ...Buffer.from('NETSCAPE2.0', 'latin1'), 3, 1, 0, 0, 0 // loop for ever
  ]
  // LZW, minimum code size 2: clear (4), the index, end (5), three bits each, least significant first.
  const frame = (i: number) => {
    const codes = 4 | ((i % 2) << 3) | (5 << 6)
    return [0x21, 0xf9, 4, 0, ...u16(delays[i % delays.length]!), 0, 0, 0x2c, 0, 0, 0, 0, ...u16(frameWidth), ...u16(frameHeight), 0, 2, 2, codes & 0xff, codes >> 8, 0]
  }
  const one = [Buffer.from(frame(0)), Buffer.from(frame(1))]
  return Buffer.concat([Buffer.from(head), ...Array.from({ length: frames }, (_, i) => one[i % 2]!), Buffer.from([0x3b])])
}

/**
 * An animated WebP of `frames` frames of distinct flat colours (sharp's encoder), each `delays[i]` ms: written into
 * the frames' 24-bit duration fields afterwards, as sharp takes no delay past 65535.
 */
export async function webpOf (width: number, height: number, frames: number, delays: number[] = [100]): Promise<Buffer> {
  const page = (i: number) => Buffer.alloc(width * height * 3, Buffer.from([(i * 97) % 256, (i * 53) % 256, 255 - ((i * 31) % 256)]))
  const raw = Buffer.concat(Array.from({ length: frames }, (_, i) => page(i)))
  const webp = await sharp(raw, { raw: { width, height: height * frames, channels: 3, pageHeight: height } })
    .webp({ lossless: true, delay: Array.from({ length: frames }, () => 100), loop: 0 }).toBuffer()
  let frame = 0
  for (let at = webp.indexOf('ANMF', 12, 'latin1'); at >= 0; at = webp.indexOf('ANMF', at + 8 + webp.readUInt32LE(at + 4), 'latin1')) {
    webp.writeUIntLE(delays[frame++ % delays.length]!, at + 8 + 12, 3)
  }
  return webp
}

/** The first ANMF frame of an animated WebP moved (x offset, in 2-px units) or grown (width - 1), past its canvas. */
export function webpFrameLying (webp: Buffer, lie: { xOffsetHalf?: number, widthMinusOne?: number }): Buffer {
  const copy = Buffer.from(webp)
  const at = copy.indexOf('ANMF', 12, 'latin1')
  if (at < 0) throw new Error('not an animated WebP')
  const payload = at + 8
  if (lie.xOffsetHalf !== undefined) copy.writeUIntLE(lie.xOffsetHalf, payload, 3)
  if (lie.widthMinusOne !== undefined) copy.writeUIntLE(lie.widthMinusOne, payload + 6, 3)
  return copy
}

/** A 3-frame GIF whose third frame's first LZW code (3 bits) is 7, a code not defined yet: the first two frames decode. */
export function gifWithBadThirdFrame (): Buffer {
  const gif = gifOf({ width: 4, height: 4, frames: 3 })
  // The last frame's 23 bytes end one before the trailer; its first data byte is its 21st.
  gif[gif.length - 1 - 23 + 20] = 7 | (7 << 3) | ((5 << 6) & 0xff)
  return gif
}
