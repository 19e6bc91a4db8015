// The clips of the video matrix (test/routes/video-matrix.test.ts): one small clip per colour class, made by
// ffmpeg at test time (cached between runs), and the same stream remuxed with each display rotation, as
// phones tag portrait video. Also the size each route must answer, worked out from the size as shown.
import { execFile } from 'node:child_process'
import { mkdir, rename, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const CACHE = join(tmpdir(), 'thumbd-test-media-v1', 'matrix-v1')

/**
 * 640x360, 2 s at 5 fps. Large enough that the sizes asked (160-167 px, twice that in ffmpeg's shrink) shrink
 * the frame, in both orientations, to sides of either parity: the shrink is where odd sides came from.
 */
const picture = ['-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=5:duration=2']
const x264 = ['-c:v', 'libx264', '-preset', 'ultrafast']
const x265 = ['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'log-level=error', '-tag:v', 'hvc1', '-pix_fmt', 'yuv420p10le']
const tags = (primaries: string, transfer: string, matrix: string) => ['-color_primaries', primaries, '-color_trc', transfer, '-colorspace', matrix]

/** The colour classes of the issue; only the tags matter to the chain (they choose its path), not the picture. */
export const CLASSES = {
  'sdr-8bit': [...x264, '-pix_fmt', 'yuv420p'],
  'sdr-10bit': [...x264, '-pix_fmt', 'yuv420p10le'],
  hlg: [...x265, ...tags('bt2020', 'arib-std-b67', 'bt2020nc')],
  pq: [...x265, ...tags('bt2020', 'smpte2084', 'bt2020nc')],
  'bt2020-sdr': [...x265, ...tags('bt2020', 'bt2020-10', 'bt2020nc')]
} as const
export type ColourClass = keyof typeof CLASSES
export const CLASS_NAMES = Object.keys(CLASSES) as ColourClass[]

/** ffmpeg's `rotate` tag: 90 is a display matrix that /api/info reports as 270 (clockwise), as a phone's. */
export const ROTATIONS = [0, 90, 180, 270] as const
export type Rotation = typeof ROTATIONS[number]

export const STORED = { width: 640, height: 360 }
/** The size as shown: a quarter turn swaps the sides. */
export const shown = (rotation: Rotation) => rotation % 180 === 0 ? { ...STORED } : { width: STORED.height, height: STORED.width }

const made = new Map<string, Promise<string>>()

/** The clip of a class with a rotation tag (the rotations are the one encoded stream, remuxed). */
export function matrixClip (colour: ColourClass, rotation: Rotation): Promise<string> {
  const key = `${colour}-${rotation}`
  let path = made.get(key)
  if (path === undefined) {
    path = rotation === 0
      ? cached(`${colour}.mp4`, [...picture, ...CLASSES[colour]])
      : matrixClip(colour, 0).then(plain => cached(`${key}.mp4`, ['-i', plain, '-c', 'copy', '-metadata:s:v:0', `rotate=${rotation}`]))
    made.set(key, path)
  }
  return path
}

async function cached (file: string, args: string[]): Promise<string> {
  const path = join(CACHE, file)
  if (await stat(path).then(s => s.size > 0, () => false)) return path
  await mkdir(CACHE, { recursive: true })
  // Test files run in parallel processes: written under a name of this process's own, then renamed into place.
  const partial = join(CACHE, `${process.pid}-${file}`)
  await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args, partial], { timeout: 120_000 })
  await rename(partial, path)
  return path
}

type Size = [number, number]
type Shown = { width: number, height: number }

/**
 * A thumbnail or a GET URL's image (never enlarged; every box here is smaller than the clip): one side gives
 * the other from the aspect as shown; a box is filled (cover, contain, fill), or the picture is scaled to fit
 * inside or cover it outside.
 */
export function imageSize ({ width: dw, height: dh }: Shown, width?: number, height?: number, fit = 'cover'): Size {
  if (width === undefined && height === undefined) return imageSize({ width: dw, height: dh }, 320)
  if (height === undefined) return [width!, Math.round((width! * dh) / dw)]
  if (width === undefined) return [Math.round((height * dw) / dh), height]
  if (fit !== 'inside' && fit !== 'outside') return [width, height]
  const scale = (fit === 'inside' ? Math.min : Math.max)(width / dw, height / dh)
  return [Math.round(dw * scale), Math.round(dh * scale)]
}

const even = (n: number) => Math.max(2, Math.round(n / 2) * 2)

/** A preview's frame: the box for cover and contain, else the aspect as shown inside it; even sides for the encoders. */
export function previewSize ({ width: dw, height: dh }: Shown, width?: number, height?: number, fit = 'inside'): Size {
  if (width === undefined && height === undefined) return previewSize({ width: dw, height: dh }, 320)
  if (width !== undefined && height !== undefined && fit !== 'inside') return [width, height]
  const scale = width === undefined ? height! / dh : height === undefined ? width / dw : Math.min(width / dw, height / dh)
  return [even(dw * scale), even(dh * scale)]
}

/** A storyboard's tile: the width asked, the height from the aspect as shown, even. */
export const tileSize = ({ width: dw, height: dh }: Shown, width: number): Size => [width, even((width * dh) / dw)]

/**
 * Issue 44's video: what a recent iPhone records by default, 1280x720 HEVC Main 10 HLG in BT.2020, square
 * pixels, tagged with a 90° display rotation (shown 720x1280); 2 s at 5 fps.
 */
export async function phoneHlg (): Promise<string> {
  const plain = await cached('phone-hlg-720p.mp4', ['-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=5:duration=2', ...CLASSES.hlg])
  return cached('phone-hlg-720p-turned.mov', ['-i', plain, '-c', 'copy', '-metadata:s:v:0', 'rotate=90'])
}
