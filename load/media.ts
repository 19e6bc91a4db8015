// Sample media for the load scenarios, made with ffmpeg (and sharp for the progressive JPEGs) on first
// use and cached under load/.media/ (ignored by git). No media files live in the repository.
import { execFile } from 'node:child_process'
import { mkdir, rename, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'

const run = promisify(execFile)
export const MEDIA_DIR = fileURLToPath(new URL('.media/', import.meta.url))

export interface SampleMedia {
  /** ~12 MB 1080p H.264, 20 s (tiny: 320x240, 2 s). */
  video: string
  /** ~15 MP progressive JPEG (tiny: 320x240). */
  photo: string
  /** ~3 MP progressive JPEG (tiny: 320x240). */
  photoSmall: string
}

async function cached (file: string, make: (path: string) => Promise<void>): Promise<string> {
  const path = join(MEDIA_DIR, file)
  if (await stat(path).then(s => s.size > 0, () => false)) return path
  await mkdir(MEDIA_DIR, { recursive: true })
  const partial = `${path}.${process.pid}.partial`
  await make(partial)
  await rename(partial, path)
  return path
}

const ffmpeg = (args: string[]) => run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args], { timeout: 300_000, maxBuffer: 1 << 20 })

/** A photo-like still: test pattern plus film grain, so the entropy decoder has real work to do. */
async function photo (path: string, width: number, height: number) {
  const { stdout } = await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc2=size=${width}x${height},noise=alls=18:allf=t`, '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'png', '-'], { encoding: 'buffer', maxBuffer: 1 << 30 })
  await sharp(stdout, { limitInputPixels: false }).jpeg({ quality: 90, progressive: true }).toFile(path)
}

export async function sampleMedia (tiny: boolean): Promise<SampleMedia> {
  if (tiny) {
    return {
      video: await cached('tiny.mp4', p => ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=25:duration=2', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-f', 'mp4', p]).then(() => {})),
      photo: await cached('tiny.jpg', p => photo(p, 320, 240)),
      photoSmall: await cached('tiny.jpg', p => photo(p, 320, 240))
    }
  }
  return {
    video: await cached('video-1080p.mp4', p => ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=1920x1080:rate=30:duration=20', '-c:v', 'libx264', '-preset', 'veryfast', '-b:v', '4800k', '-pix_fmt', 'yuv420p', '-f', 'mp4', p]).then(() => {})),
    photo: await cached('photo-15mp.jpg', p => photo(p, 4480, 3360)),
    photoSmall: await cached('photo-3mp.jpg', p => photo(p, 2048, 1536))
  }
}
