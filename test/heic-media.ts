// HEIC made at test time: ffmpeg's testsrc2 picture (photo-like detail) as PNG, then heif-enc (libheif's, HEVC
// inside); or the same picture as libx265's HEVC stream, for HEIFs written box by box. Both files stay in `dir`,
// named NAME.png and NAME.heic (NAME.hevc). And native/heif-decode run on one, watched.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { FastifyInstance } from 'fastify'
import { decoderChildren } from './faults/helpers.ts'
import { leftoverTempFiles, postMedia } from './helper.ts'

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

/** A hostile HEIC's reply: `status` and `code`, in under 5 s, with nothing left behind. */
export async function refusedHeic (app: FastifyInstance, name: string, body: Buffer, status: number, code: string): Promise<void> {
  const started = Date.now()
  const res = await postMedia(app, 'thumbnail', body, 'image/heic')
  const json = String(res.headers['content-type']).includes('json')
  assert.equal(res.statusCode, status, `${name}: ${json ? res.body : `${res.headers['content-type']}, decoded`}`)
  assert.equal(res.json().code, code, name)
  assert.ok(Date.now() - started < 5000, `${name}: answered in ${Date.now() - started} ms`)
  assert.deepEqual(decoderChildren(), [], `${name}: no heif-decode left running`)
  assert.deepEqual(leftoverTempFiles(app), [], `${name}: no temp file left`)
}
