// HEIC made at test time: ffmpeg's testsrc2 picture (photo-like detail) as PNG, then heif-enc (libheif's, HEVC
// inside). Both files stay in `dir`, named NAME.png and NAME.heic.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** A SIZE (e.g. 1600x1200) HEIC at quality 60, heif-enc's `extra` options after that. */
export async function makeHeic (dir: string, name: string, size: string, extra: string[] = []): Promise<Buffer> {
  const png = join(dir, `${name}.png`)
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=${size}`, '-frames:v', '1', png])
  await run('heif-enc', ['-q', '60', ...extra, '-o', join(dir, `${name}.heic`), png])
  return readFileSync(join(dir, `${name}.heic`))
}
