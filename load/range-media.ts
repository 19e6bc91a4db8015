// The videos of the range-read benches (range-bench.ts from an HTTP origin, store-range-bench.ts from an S3
// bucket), made once by ffmpeg under load/.media/: one minute of noisy 1080p, copied end to end into an hour
// of about 2 GB (MP4 with its index at the end, and the same as Matroska); a long-GOP clip; a 30 s clip.
import { execFile } from 'node:child_process'
import { mkdir, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { MEDIA_DIR } from './media.ts'

const run = promisify(execFile)
const say = (line: string) => process.stderr.write(`${line}\n`)

/** One minute of 1080p at ~4.6 Mbit/s (noise keeps the encoder from making it smaller), a keyframe every 2 s. */
export async function minuteClip (): Promise<string> {
  const path = join(MEDIA_DIR, 'range-minute-1080p.mp4')
  if (await stat(path).catch(() => undefined)) return path
  say('encoding one minute of 1080p (once)...')
  await mkdir(MEDIA_DIR, { recursive: true })
  await run('ffmpeg', ['-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=1920x1080:rate=25:duration=60,noise=alls=12:allf=t',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-b:v', '4600k', '-maxrate', '4600k', '-bufsize', '9200k', '-g', '50', '-pix_fmt', 'yuv420p', path])
  return path
}

/** `minutes` copies of the clip end to end (-c copy), the MP4 index written last; then the same as Matroska. */
export async function longVideos (minutes: number): Promise<{ mp4: string, mkv: string }> {
  const mp4 = join(MEDIA_DIR, `range-${minutes}min-1080p.mp4`)
  const mkv = join(MEDIA_DIR, `range-${minutes}min-1080p.mkv`)
  if (!(await stat(mp4).catch(() => undefined))) {
    const clip = await minuteClip()
    const list = join(MEDIA_DIR, 'range-concat.txt')
    await writeFile(list, Array.from({ length: minutes }, () => `file '${clip}'\n`).join(''))
    say(`joining ${minutes} minutes (once)...`)
    await run('ffmpeg', ['-loglevel', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', list, '-c', 'copy', mp4])
  }
  if (!(await stat(mkv).catch(() => undefined))) await run('ffmpeg', ['-loglevel', 'error', '-y', '-i', mp4, '-c', 'copy', mkv])
  return { mp4, mkv }
}

/** One keyframe in 10 s of 1080p: an exact frame at 8 s decodes ~200 frames, a keyframe seek one. */
export async function longGopClip (): Promise<string> {
  const path = join(MEDIA_DIR, 'range-long-gop-1080p.mp4')
  if (await stat(path).catch(() => undefined)) return path
  await run('ffmpeg', ['-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=1920x1080:rate=25:duration=10',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '1000', '-keyint_min', '1000', '-sc_threshold', '0', '-pix_fmt', 'yuv420p', path])
  return path
}

/** The first 30 s of the minute clip (-c copy): an upload of a phone-sized clip. */
export async function halfMinuteClip (): Promise<string> {
  const path = join(MEDIA_DIR, 'range-30s-1080p.mp4')
  if (!(await stat(path).catch(() => undefined))) await run('ffmpeg', ['-loglevel', 'error', '-y', '-i', await minuteClip(), '-t', '30', '-c', 'copy', path])
  return path
}
