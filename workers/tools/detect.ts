// What this host offers for running tools, found once at start by the main thread: the tools' versions, the
// decoder sandbox this kernel gives (thumbd-sandbox-exec --report; util-linux's prlimit/setpriv where it is
// not built), whether the zygote loads into both tools, and whether heif-decode runs.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'
import { HEIF_DECODE_FILE, IMAGE_DECODE_FILE, preloadingZygote, SANDBOX_EXEC_FILE, ZYGOTE_FILE } from './sandbox.ts'
import type { Sandbox } from '../../contract/types.ts'

const run = promisify(execFile)

/**
 * Set in every tool's environment to the server's pid: how an operator (or a test) finds this server's
 * decoders, wherever they run in the process tree (even one that escaped its helper and was re-parented).
 */
export const TOOL_MARKER = 'THUMBD_TOOL_OF'

/** The report of a kernel that gives every mechanism: Landlock with TCP rules and scopes (ABI >= 6), and seccomp. */
const FULL_SANDBOX = /^landlock ABI \d+ \(fs, tcp, scopes\); seccomp filter yes$/

export interface ToolSettings {
  ffmpegPath: string
  ffprobePath: string
  /** FFMPEG_ZYGOTE */
  zygote: 'auto' | 'off'
  /** Config.toolEnv: the tools' whole environment. */
  env: Readonly<Record<string, string>>
}

export interface DetectedTools {
  /** Versions; undefined when the tool does not run. */
  ffmpeg: string | undefined
  ffprobe: string | undefined
  /** native/heif-decode, if built and it runs. */
  heifDecode: string | undefined
  /** native/image-decode (JPEG through libturbojpeg, in the sandbox), if built and it runs. */
  imageDecode: string | undefined
  /** image-decode was built with its --still and --info decoders (it answers `--info` with its own usage line, 64). */
  imageDecodeStills: boolean
  /** Everything of the sandbox but the per-job limits. */
  sandbox: Omit<Sandbox, 'addressSpaceBytes' | 'cpuSeconds'>
  /** What confines a decoder on this host, in one line (for the start-up log and /health). */
  confinement: string
  /** The sandbox lacks a mechanism here (no wrapper, no Landlock, no seccomp ...): said at start, not hidden. */
  confinementMissing: boolean
  /**
   * A tool can be let connect to one TCP port and nothing else (native/sandbox.c with Landlock's TCP rules,
   * ABI >= 4, and seccomp): what reading remote videos by ranges needs.
   */
  portConfinement: boolean
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

/** thumbd-sandbox-exec, if built, and what this kernel gives it ("landlock ABI 7 (fs, tcp, scopes); seccomp filter yes"). */
async function sandboxExec (): Promise<{ exec?: string, report: string }> {
  try {
    const { stdout } = await run(SANDBOX_EXEC_FILE, ['--report'], { timeout: 5000 })
    return { exec: SANDBOX_EXEC_FILE, report: stdout.trim() }
  } catch {
    return { report: 'native/thumbd-sandbox-exec is not built' }
  }
}

/** The zygote, if enabled, built, and loadable into both tools with their environment (it only serves when asked to). */
async function zygote (settings: ToolSettings): Promise<Sandbox['zygote']> {
  if (settings.zygote === 'off' || !existsSync(ZYGOTE_FILE)) return undefined
  const env = preloadingZygote(ZYGOTE_FILE, settings.env)
  const loads = await Promise.all([version(settings.ffmpegPath, env), version(settings.ffprobePath, env)])
  return loads.every(v => v !== undefined) ? { library: ZYGOTE_FILE } : undefined
}

/** What image-decode's usage must name for the still decoders this thread asks for (still-sandboxed.ts, header-sandboxed.ts). */
const STILL_OPTIONS = ['--info', '--resize lanczos3', '--flatten R G B', '--alpha premultiplied']

export async function detectTools (settings: ToolSettings): Promise<DetectedTools> {
  const [ffmpeg, ffprobe, prlimit, setpriv, forkedFrom, { exec, report }, heifDecode, imageDecode, imageDecodeStills] = await Promise.all([
    version(settings.ffmpegPath),
    version(settings.ffprobePath),
    supports('prlimit', ['--help'], '--as'),
    supports('setpriv', ['--help'], '--pdeathsig'),
    zygote(settings),
    sandboxExec(),
    // It answers its usage line with 64 when it runs at all (its libraries present).
    run(HEIF_DECODE_FILE, []).then(() => HEIF_DECODE_FILE, (err: { code?: unknown }) => err.code === 64 ? HEIF_DECODE_FILE : undefined),
    run(IMAGE_DECODE_FILE, []).then(() => IMAGE_DECODE_FILE, (err: { code?: unknown }) => err.code === 64 ? IMAGE_DECODE_FILE : undefined),
    // Its --still and --info decoders as this thread asks for them: a build older than its reader (no --info, no
    // --resize, --flatten or --alpha) answers another usage line, and would refuse every still asked of it.
    run(IMAGE_DECODE_FILE, ['--info']).then(() => false, (err: { code?: unknown, stderr?: unknown }) => err.code === 64 && STILL_OPTIONS.every(option => String(err.stderr).includes(option)))
  ])
  // The zygote and the wrapper carry the same native/sandbox.c; without the wrapper only limits remain.
  const confinement = exec === undefined ? `limits only (${prlimit === undefined ? 'no prlimit' : 'prlimit'}, ${setpriv === undefined ? 'no setpriv' : 'setpriv'}): ${report}` : report
  const confinementMissing = exec === undefined || !FULL_SANDBOX.test(report)
  return {
    ffmpeg,
    ffprobe,
    heifDecode,
    imageDecode,
    imageDecodeStills,
    sandbox: { exec, prlimit, setpriv, env: { ...settings.env, [TOOL_MARKER]: String(process.pid) }, zygote: forkedFrom },
    confinement,
    confinementMissing,
    portConfinement: exec !== undefined && /^landlock ABI \d+ \(fs, tcp[,)].*; seccomp filter yes$/.test(report)
  }
}
