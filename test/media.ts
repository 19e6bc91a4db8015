// Test media, made by ffmpeg at test time and cached between runs (no media files in the repo).
// Test files run in parallel processes, so each file is written under a temp name and renamed into place.
import { execFile } from 'node:child_process'
import { mkdir, readFile, rename, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const CACHE = join(tmpdir(), 'thumbd-test-media-v1')

const pattern = (size: string, seconds: number) => ['-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=25:duration=${seconds}`]
const still = ['-f', 'lavfi', '-i', 'testsrc2=size=640x480:rate=1', '-frames:v', '1']
const h264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']

/** name -> [file name, ffmpeg arguments before the output path] */
const RECIPES = {
  jpeg: ['still.jpg', [...still]],
  png: ['still.png', [...still]],
  webp: ['still.webp', [...still, '-c:v', 'libwebp']],
  gif: ['anim.gif', ['-f', 'lavfi', '-i', 'testsrc2=size=640x480:rate=5:duration=1']],
  'webp-anim': ['anim.webp', ['-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=5:duration=1', '-c:v', 'libwebp', '-loop', '0']],
  avif: ['still.avif', [...still, '-c:v', 'libaom-av1', '-still-picture', '1', '-cpu-used', '8']],
  // Distinct pictures for perceptual-hash tests.
  'pic-testsrc2': ['pic-testsrc2.jpg', ['-f', 'lavfi', '-i', 'testsrc2=size=640x480', '-frames:v', '1']],
  'pic-mandelbrot': ['pic-mandelbrot.jpg', ['-f', 'lavfi', '-i', 'mandelbrot=size=640x480', '-frames:v', '1']],
  'pic-life': ['pic-life.jpg', ['-f', 'lavfi', '-i', 'life=s=640x480:mold=10:ratio=0.3:seed=7', '-frames:v', '1']],
  'pic-smpte': ['pic-smpte.jpg', ['-f', 'lavfi', '-i', 'smptebars=size=640x480', '-frames:v', '1']],
  'pic-sierpinski': ['pic-sierpinski.jpg', ['-f', 'lavfi', '-i', 'sierpinski=size=640x480', '-frames:v', '1']],
  'pic-plasma': ['pic-plasma.jpg', ['-f', 'lavfi', '-i', 'nullsrc=s=640x480,geq=r=128+127*sin(X/40)*cos(Y/30):g=128+127*sin((X+Y)/50):b=128+127*cos(X/25)', '-frames:v', '1']],
  'pic-testsrc': ['pic-testsrc.jpg', ['-f', 'lavfi', '-i', 'testsrc=size=640x480', '-frames:v', '1']],
  // Noise defeats compression: a JPEG past 2 MiB, too large to share a pool thread (src/jobs/pairing.ts).
  'jpeg-noisy': ['noisy.jpg', ['-f', 'lavfi', '-i', 'nullsrc=s=2400x1600,geq=random(1)*255:128:128', '-frames:v', '1', '-q:v', '2']],
  'jpeg-large': ['large.jpg', ['-f', 'lavfi', '-i', 'testsrc2=size=3000x2000:rate=1', '-frames:v', '1']],
  'mp4-h264': ['h264.mp4', [...pattern('640x360', 2), ...h264]],
  'mp4-h264-faststart': ['h264-faststart.mp4', [...pattern('640x360', 2), ...h264, '-movflags', '+faststart']],
  'mp4-h265': ['h265.mp4', [...pattern('640x360', 2), '-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'log-level=error', '-pix_fmt', 'yuv420p', '-tag:v', 'hvc1']],
  mov: ['h264.mov', [...pattern('640x360', 2), ...h264]],
  'webm-vp8': ['vp8.webm', [...pattern('640x360', 2), '-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8']],
  'webm-vp9': ['vp9.webm', [...pattern('640x360', 2), '-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8']],
  'webm-av1': ['av1.webm', [...pattern('640x360', 2), '-c:v', 'libsvtav1', '-preset', '12']],
  // One keyframe in 10 s of 1080p: seeking to 8 s decodes ~200 frames, a job that runs for a while.
  'slow-seek': ['slow-seek.mp4', [...pattern('1920x1080', 10), ...h264, '-g', '1000', '-keyint_min', '1000', '-sc_threshold', '0']],
  // The same in HEVC Main 10 (x265, smaller: it encodes slowly): a keyframe seek there took no -skip_frame.
  'slow-seek-hevc': ['slow-seek-hevc.mp4', [...pattern('640x360', 10), '-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'keyint=1000:min-keyint=1000:scenecut=0:log-level=error', '-pix_fmt', 'yuv420p10le', '-tag:v', 'hvc1']],
  // 20 s at 3 Mbit/s (~7.5 MB), a keyframe every 2 s: a file a poster frame needs little of. MP4's index at the
  // end (no faststart); Matroska's cues at the end too, found through its seek head.
  'long-mp4': ['long.mp4', [...pattern('640x360', 20), ...h264, '-b:v', '3M', '-g', '50']],
  // 30 s at 30 fps with x264's default GOP (keyint 250: a keyframe every 8.3 s), as many web videos: an
  // 8-frame preview's keyframe seeks land on 4 keyframes.
  'long-gop-mp4': ['long-gop.mp4', [...pattern('320x180', 30).map(a => a.replace('rate=25', 'rate=30')), ...h264]],
  // One keyframe in 20 s (500 frames): a preview's exact seeks would decode up to all of them.
  'one-keyframe-mp4': ['one-keyframe.mp4', [...pattern('320x180', 20), ...h264, '-g', '1000', '-keyint_min', '1000', '-sc_threshold', '0']],
  'long-mkv': ['long.mkv', [...pattern('640x360', 20), ...h264, '-b:v', '3M', '-g', '50']],
  'tiny-mp4': ['tiny.mp4', [...pattern('160x120', 0.5), ...h264]],
  'tiny-webm': ['tiny.webm', [...pattern('160x120', 0.5), '-c:v', 'libvpx', '-deadline', 'realtime']],
  'many-frames-gif': ['many-frames.gif', ['-f', 'lavfi', '-i', 'testsrc2=size=32x32:rate=100:duration=30']],
  'huge-frame-mov': ['huge-frame.mov', ['-f', 'lavfi', '-i', 'color=c=blue:s=8192x8192:d=0.04', '-frames:v', '1', '-c:v', 'mjpeg', '-pix_fmt', 'yuvj420p']],
  tiff: ['still.tiff', [...still]],
  bmp: ['still.bmp', [...still]],
  mkv: ['h264.mkv', [...pattern('640x360', 2), ...h264]],
  avi: ['mpeg4.avi', [...pattern('640x360', 2), '-c:v', 'mpeg4']],
  // Black for its first 0.4 s, then the pattern: frame=best at 0 must pick a pattern frame, the exact frame is black.
  'black-start-mp4': ['black-start.mp4', ['-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25:duration=2,fade=t=in:st=0.4:d=0.04', ...h264]]
} as const satisfies Record<string, readonly [string, readonly string[]]>

export type MediaName = keyof typeof RECIPES
export const IMAGES = ['jpeg', 'png', 'webp', 'gif', 'avif'] as const satisfies readonly MediaName[]
export const PICTURES = ['pic-testsrc2', 'pic-mandelbrot', 'pic-life', 'pic-smpte', 'pic-sierpinski', 'pic-plasma', 'pic-testsrc'] as const satisfies readonly MediaName[]
export const VIDEOS = ['mp4-h264', 'mp4-h264-faststart', 'mp4-h265', 'mov', 'webm-vp8', 'webm-vp9', 'webm-av1', 'mkv', 'avi'] as const satisfies readonly MediaName[]

const made = new Map<MediaName, Promise<string>>()

export function mediaPath (name: MediaName): Promise<string> {
  let path = made.get(name)
  if (path === undefined) {
    path = make(name)
    made.set(name, path)
  }
  return path
}

export async function media (name: MediaName): Promise<Buffer> {
  return readFile(await mediaPath(name))
}

async function make (name: MediaName): Promise<string> {
  const [file, args] = RECIPES[name]
  const path = join(CACHE, file)
  if (await stat(path).then(s => s.size > 0, () => false)) return path
  await mkdir(CACHE, { recursive: true })
  const partial = join(CACHE, `${process.pid}-${file}`)
  await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args, partial], { timeout: 60_000 })
  await rename(partial, path)
  return path
}
