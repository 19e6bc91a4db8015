// The ffmpeg/ffprobe command lines, built by hand (fluent-ffmpeg is archived; see README).
// Every input is read the same guarded way: local file protocol only, demuxer forced from the sniffed
// type, so playlists (hls, concat), image2 patterns and network protocols are never auto-selected.
import type { Demuxer } from './sniff.ts'

const quiet = ['-hide_banner', '-loglevel', 'error'] as const

function guardedInput (path: string, demuxer: Demuxer): string[] {
  // "file:" keeps a path from ever being read as another protocol.
  return ['-protocol_whitelist', 'file', '-f', demuxer, '-i', `file:${path}`]
}

export function probeArgs (path: string, demuxer: Demuxer): string[] {
  return [
    ...quiet,
    '-show_entries', 'format=duration,nb_streams:stream=index,codec_type,width,height,duration',
    '-of', 'json',
    ...guardedInput(path, demuxer)
  ]
}

export interface FrameRequest {
  path: string
  demuxer: Demuxer
  seekSeconds: number
  /** Let ffmpeg's thumbnail filter choose among this many frames after the seek point (0: take the first). */
  bestOf: number
  threads: number
}

/** One decoded frame as a binary PPM (RGB, header with its size) on stdout. */
export function frameArgs ({ path, demuxer, seekSeconds, bestOf, threads }: FrameRequest): string[] {
  return [
    ...quiet,
    '-nostdin',
    '-threads', String(threads),
    // -ss before -i: seek in the demuxer (fast), then decode only up to the exact time.
    '-ss', seekSeconds.toFixed(3),
    ...guardedInput(path, demuxer),
    '-map', '0:v:0', '-an', '-sn', '-dn',
    ...(bestOf > 0 ? ['-vf', `thumbnail=n=${bestOf}`] : []),
    '-frames:v', '1',
    '-f', 'image2pipe', '-c:v', 'ppm', 'pipe:1'
  ]
}
