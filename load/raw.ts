// The raw ceilings thumbd is measured against, on the same machine in the same run.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import sharp from 'sharp'

const run = promisify(execFile)

/** Runs `once` in `parallel` loops for `seconds`; completed runs per second. */
async function rate (parallel: number, seconds: number, once: () => Promise<unknown>): Promise<number> {
  const until = performance.now() + seconds * 1000
  let done = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (performance.now() < until) { await once(); done++ }
  }))
  return done / ((performance.now() - started) / 1000)
}

/** The same frame grab as thumbd's video workload, by the ffmpeg CLI. */
export const ffmpegFrameCommand = (video: string, at: number, threads?: number) =>
  ['-hide_banner', '-loglevel', 'error', ...(threads === undefined ? [] : ['-threads', String(threads)]), '-ss', String(at), '-i', video, '-frames:v', '1', '-vf', 'scale=320:-2', '-f', 'image2pipe', '-c:v', 'mjpeg', '-q:v', '4', 'pipe:1']

/**
 * N = cores processes in parallel, each with ffmpeg's default threads and with one decoder thread: the
 * faster counts. On 2 cores one thread each is ~15 % faster (frame threads only add contention), and
 * thumbd itself runs one per job under load.
 */
export async function rawVideo (video: string, cores: number, seconds: number): Promise<number> {
  let best = 0
  for (const threads of [undefined, 1]) {
    best = Math.max(best, await rate(cores, seconds / 2, () => run('ffmpeg', ffmpegFrameCommand(video, 1, threads), { encoding: 'buffer', maxBuffer: 1 << 24 })))
  }
  return best
}

/** sharp in a tight loop: the best of 1, 2 and 2x cores pipelines in flight. */
export async function rawSharp (photo: string, cores: number, seconds: number): Promise<number> {
  const bytes = await readFile(photo)
  const once = () => sharp(bytes).rotate().resize({ width: 320 }).jpeg({ quality: 80 }).toBuffer()
  let best = 0
  for (const parallel of [...new Set([1, cores, cores * 2])]) best = Math.max(best, await rate(parallel, seconds / 3, once))
  return best
}

/** SHA-256 of the same bytes: the faster of Node crypto (one core) and N parallel sha256sum processes. */
export async function rawHash (file: string, cores: number, seconds: number): Promise<number> {
  const bytes = await readFile(file)
  const crypto = await rate(1, seconds / 2, async () => createHash('sha256').update(bytes).digest())
  const cli = await rate(cores, seconds / 2, () => run('sha256sum', [file]))
  return Math.max(crypto, cli)
}
