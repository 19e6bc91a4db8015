// ffmpeg hands frames over as PAM (P7): a short text header, then raw 8-bit RGB or RGBA (the filter chain
// converts every pixel format to one of the two, workers/video/frame-filters.ts). Parsing it here lets sharp take
// the pixels as raw input, with no PNG encode/decode round trip and no PAM loader enabled.
import { JobError } from '../../contract/job-error.ts'

export interface RawFrame {
  data: Uint8Array
  width: number
  height: number
  channels: 3 | 4
}

const HEADER = /^P7\nWIDTH (\d+)\nHEIGHT (\d+)\nDEPTH ([34])\nMAXVAL 255\nTUPLTYPE (RGB|RGB_ALPHA)\nENDHDR\n/

export function parsePam (bytes: Uint8Array): RawFrame {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 96)).toString('latin1')
  const match = HEADER.exec(head)
  if (match === null || (match[3] === '4') !== (match[4] === 'RGB_ALPHA')) throw new JobError('MEDIA_UNREADABLE', 'no frame could be decoded')
  const width = Number(match[1])
  const height = Number(match[2])
  const channels = match[3] === '4' ? 4 : 3
  const data = bytes.subarray(match[0].length)
  if (width === 0 || height === 0 || data.length !== width * height * channels) {
    throw new JobError('MEDIA_UNREADABLE', 'the decoded frame is incomplete')
  }
  return { data, width, height, channels }
}

/** PAMs one after another (a pass that writes several frames), each parsed as parsePam does. */
export function parsePams (bytes: Uint8Array): RawFrame[] {
  const frames: RawFrame[] = []
  for (let at = 0; at < bytes.length;) {
    const head = Buffer.from(bytes.buffer, bytes.byteOffset + at, Math.min(bytes.length - at, 96)).toString('latin1')
    const match = HEADER.exec(head)
    if (match === null) throw new JobError('MEDIA_UNREADABLE', 'no frame could be decoded')
    const end = at + match[0].length + Number(match[1]) * Number(match[2]) * Number(match[3])
    frames.push(parsePam(bytes.subarray(at, Math.min(end, bytes.length))))
    at = end
  }
  return frames
}
