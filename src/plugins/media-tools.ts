// Finds out once, at start, whether ffmpeg and ffprobe work here. Without them images still work,
// video jobs answer 503 VIDEO_UNAVAILABLE and /health says what is missing.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'
import fp from 'fastify-plugin'
import type { Config } from '../config.ts'
import { errors } from '../errors.ts'
import type { Sandbox } from '../../workers/types.ts'
import { preloadingZygote, ZYGOTE_FILE } from '../../workers/zygote.ts'

const run = promisify(execFile)

export interface MediaTools {
  /** What every ffmpeg/ffprobe run gets: util-linux's limits where present (workers/ffmpeg-args.ts), its environment, and the zygote where it loads. */
  sandbox: Omit<Sandbox, 'addressSpaceBytes' | 'cpuSeconds'>
  ffmpeg: string | undefined
  ffprobe: string | undefined
  /** Both tools answered: video jobs can run. */
  video: boolean
  missing: string[]
  /** Throws 503 VIDEO_UNAVAILABLE when video jobs cannot run here. */
  assertVideo (): void
}

declare module 'fastify' {
  interface FastifyInstance {
    mediaTools: MediaTools
  }
}

async function version (bin: string, env?: NodeJS.ProcessEnv): Promise<string | undefined> {
  try {
    const { stdout } = await run(bin, ['-hide_banner', '-version'], { timeout: 5000, env })
    return /version (\S+)/.exec(stdout)?.[1] ?? 'unknown'
  } catch {
    return undefined
  }
}

/** The tool if it runs and its help mentions `needle`. */
async function supports (bin: string, args: string[], needle: string): Promise<string | undefined> {
  try {
    const { stdout } = await run(bin, args, { timeout: 5000 })
    return stdout.includes(needle) ? bin : undefined
  } catch {
    return undefined
  }
}

/** The zygote, if enabled, built, and loadable into both tools with their environment (it only serves when asked to). */
async function zygote (config: Config): Promise<Sandbox['zygote']> {
  if (config.ffmpegZygote === 'off' || !existsSync(ZYGOTE_FILE)) return undefined
  const env = preloadingZygote(ZYGOTE_FILE, config.toolEnv)
  const loads = await Promise.all([version(config.ffmpegPath, env), version(config.ffprobePath, env)])
  return loads.every(v => v !== undefined) ? { library: ZYGOTE_FILE } : undefined
}

export default fp<{ config: Config }>(async (app, { config }) => {
  const [ffmpeg, ffprobe, prlimit, setpriv, forkedFrom] = await Promise.all([
    version(config.ffmpegPath),
    version(config.ffprobePath),
    supports('prlimit', ['--help'], '--as'),
    supports('setpriv', ['--help'], '--pdeathsig'),
    zygote(config)
  ])
  if (prlimit === undefined || setpriv === undefined) app.log.warn('prlimit/setpriv (util-linux) not found: ffmpeg runs without OS resource limits')
  const missing = [ffmpeg === undefined && 'ffmpeg', ffprobe === undefined && 'ffprobe'].filter(x => x !== false)
  if (missing.length > 0) app.log.warn({ missing }, 'video jobs are unavailable: %s not found', missing.join(' and '))
  else if (forkedFrom === undefined && config.ffmpegZygote === 'auto') app.log.warn('native/ffmpeg-zygote.so is not built or does not load: each ffmpeg run pays its full start-up (see README)')
  app.decorate('mediaTools', {
    sandbox: { prlimit, setpriv, env: config.toolEnv, zygote: forkedFrom },
    ffmpeg,
    ffprobe,
    video: missing.length === 0,
    missing,
    assertVideo () {
      if (missing.length > 0) throw new errors.VideoUnavailable(`${missing.join(' and ')} not found`)
    }
  })
}, { name: 'media-tools' })
