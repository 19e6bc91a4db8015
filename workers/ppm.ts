// ffmpeg hands frames over as binary PPM (P6): a tiny text header, then raw RGB. Parsing it here lets
// sharp take the pixels as raw input, with no PNG encode/decode round trip and no PPM loader enabled.
import { JobError } from '../contract/job-error.ts'

export interface RawFrame {
  data: Uint8Array
  width: number
  height: number
  channels: 3
}

const HEADER = /^P6\s+(\d+)\s+(\d+)\s+255\s/

export function parsePpm (bytes: Uint8Array): RawFrame {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 64)).toString('latin1')
  const match = HEADER.exec(head)
  if (match === null) throw new JobError('MEDIA_UNREADABLE', 'no frame could be decoded')
  const width = Number(match[1])
  const height = Number(match[2])
  const data = bytes.subarray(match[0].length)
  if (width === 0 || height === 0 || data.length !== width * height * 3) {
    throw new JobError('MEDIA_UNREADABLE', 'the decoded frame is incomplete')
  }
  return { data, width, height, channels: 3 }
}
