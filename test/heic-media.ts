// HEIC made at test time: ffmpeg's testsrc2 picture (photo-like detail) as PNG, then heif-enc (libheif's, HEVC
// inside); or the same picture as libx265's HEVC stream, for HEIFs written box by box. Both files stay in `dir`,
// named NAME.png and NAME.heic (NAME.hevc). And native/heif-decode run on one, watched.
import { execFile, spawn } from 'node:child_process'
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

/** One SIZE picture (testsrc2, as makeHeic's) as libx265's HEVC elementary stream (Annex B), x265 `params` (e.g. slices=4) given. */
export async function makeHevcStream (dir: string, name: string, size: string, params: string): Promise<Buffer> {
  const file = join(dir, `${name}.hevc`)
  const x265 = `${params}:log-level=error`
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=${size}`, '-frames:v', '1', '-pix_fmt', 'yuv420p', '-c:v', 'libx265', '-x265-params', x265, '-f', 'hevc', file])
  return readFileSync(file)
}

/** Runs heif-decode on `file` directly, counting its threads from /proc while it runs: exit code, stderr, the most seen at once. */
export async function decodeCountingThreads (file: string, args: string[]): Promise<{ code: number | null, stderr: string, peak: number }> {
  const tool = new URL('../native/heif-decode', import.meta.url).pathname
  const child = spawn(tool, ['--max-pixels', '50000000', ...args, file], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  let peak = 0
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk })
  const closed = new Promise(resolve => child.on('close', resolve))
  const exit = { code: undefined as number | null | undefined }
  child.on('exit', status => { exit.code = status })
  while (exit.code === undefined) {
    try {
      const threads = Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0)
      peak = Math.max(peak, threads)
    } catch {}
    await new Promise(resolve => setImmediate(resolve))
  }
  await closed
  return { code: exit.code, stderr, peak }
}
