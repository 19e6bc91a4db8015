// Whether an ICC profile describes sRGB: such a profile converts sRGB to sRGB, so thumbd drops it unread
// (image.ts colourHandling, and the sandboxed stills' raw path in still-sandboxed.ts).

/** The profile's description names sRGB (in its ASCII 'desc' or UTF-16 'mluc' form), as imgproxy tests it. */
export function describesSrgb (icc: Buffer): boolean {
  return icc.includes('sRGB', 0, 'latin1') || icc.includes('sRGB', 0, 'utf16le') || icc.includes(Buffer.from('\0s\0R\0G\0B', 'latin1'))
}
