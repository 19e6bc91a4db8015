// Runs ffmpeg/ffprobe for this worker, forked from its zygote (zygote.ts) or started by its launcher
// (launcher.ts): bounded output, killed on cancel or deadline (SIGTERM, then SIGKILL), and counted, so
// nothing outlives the job that started it.
import { JobError } from '../../contract/job-error.ts'
import { launch } from './launcher.ts'
import { execChain } from './sandbox.ts'
import { launchInZygote } from './zygote.ts'
import type { Sandbox } from '../../contract/types.ts'

const KILL_GRACE_MS = 1000
const STDERR_KEEP_BYTES = 2048
/** Kept lines (ToolLimits.keepLines): at most this many, each cut to this length. */
const MAX_KEPT_LINES = 512
const MAX_KEPT_LINE_CHARS = 512

export interface ToolRun {
  code: number
  stdout: Buffer
  /** The stderr lines that matched ToolLimits.keepLines, wherever they came, joined by newlines. */
  kept: string
  /** The last 2 KB of stderr. */
  stderr: string
  /** What those say about why the tool stopped (whyOf): for the log, never for a reply. */
  why: string
}

/**
 * ffmpeg's input report and progress lines, which its refusals come after: the container's metadata
 * (indented), the streams, the mapping, the output's header. What is left names the demuxer, decoder or
 * filter that refused and what it said.
 */
const REPORT = /^(?:\s|Input #|Output #|Stream mapping:|Press \[q\]|frame=|video:|size=)/

/**
 * The lines of a tool's stderr that say why it stopped, each once, without the report around them and
 * without the addresses ffmpeg prints in its log prefixes ("[Parsed_zscale_2 @ 0x55ce394aa640]"): the
 * refusal an operator needs at debug level, where a 2 KB tail was mostly the input report. A stderr of
 * only report lines is given as it was.
 */
export function whyOf (stderr: string): string {
  // A tail cut at STDERR_KEEP_BYTES starts inside a line: that piece says nothing.
  const whole = stderr.length < STDERR_KEEP_BYTES ? stderr : stderr.slice(stderr.indexOf('\n') + 1)
  const lines = whole.split('\n').filter(l => l.trim() !== '' && !REPORT.test(l)).map(l => l.replace(/ @ 0x[0-9a-f]+\]/, ']'))
  return lines.length === 0 ? stderr.trim() : [...new Set(lines)].join('\n')
}

export interface ToolLimits {
  signal: AbortSignal
  maxStdoutBytes: number
  /** Shared Int32 counting live children across threads (JobSettings.children). */
  children: SharedArrayBuffer
  sandbox: Sandbox
  /** The files the tool may read (its input): in the sandbox, nothing else can be opened. */
  reads?: readonly string[]
  /** The one TCP port the tool may connect to: thumbd's range reader (src/sources/range-reader.ts) for a remote video. */
  connectPort?: number
  /**
   * stderr lines to keep, however much else the tool prints (ffmpeg's input report can come after megabytes
   * of metadata a file chose to carry). Only the start of a line is tested.
   */
  keepLines?: RegExp
  /** Called with each kept line as it comes (the caller may stop the tool early on what it says). */
  onKeptLine?: (line: string) => void
  /** Resolve with the exit code instead of rejecting when the tool exits non-zero. */
  anyExitCode?: boolean
}

export function runTool (bin: string, args: string[], { signal, maxStdoutBytes, children, sandbox, reads = [], connectPort, keepLines, onKeptLine, anyExitCode = false }: ToolLimits): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted()
    const live = new Int32Array(children)
    const child = sandbox.zygote === undefined
      ? launch(execChain(bin, args, sandbox, reads, connectPort), sandbox.setpriv, sandbox.env)
      : launchInZygote(sandbox.zygote, bin, args, sandbox, reads, connectPort)
    Atomics.add(live, 0, 1)
    const chunks: Buffer[] = []
    let stdoutBytes = 0
    let stderr = ''
    const kept: string[] = []
    /** The start of the line being received (only what keepLines needs). */
    let line = ''
    const keep = (text: string) => {
      if (keepLines === undefined || kept.length >= MAX_KEPT_LINES || !keepLines.test(text)) return
      kept.push(text.slice(0, MAX_KEPT_LINE_CHARS))
      onKeptLine?.(kept.at(-1)!)
    }
    let failure: unknown
    let killTimer: NodeJS.Timeout | undefined

    const stop = (reason: unknown) => {
      failure ??= reason
      child.kill('SIGTERM')
      killTimer ??= setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS)
    }
    const onAbort = () => stop(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })

    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length
      if (stdoutBytes > maxStdoutBytes) stop(new JobError('MEDIA_UNREADABLE', 'decoder output larger than the declared size'))
      else chunks.push(chunk)
    })
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8')
      stderr = (stderr + text).slice(-STDERR_KEEP_BYTES)
      if (keepLines === undefined) return
      const lines = (line + text).split('\n')
      line = lines.pop()!.slice(0, MAX_KEPT_LINE_CHARS)
      for (const full of lines) keep(full)
    })
    child.on('error', (err: NodeJS.ErrnoException) => {
      failure ??= err.code === 'ENOENT'
        ? new JobError('VIDEO_UNAVAILABLE', `${bin.split('/').pop()} is not installed`)
        : new JobError('INTERNAL', 'could not start a decoder', err.message)
    })
    child.on('close', (code: number | null, killedBy: NodeJS.Signals | null) => {
      Atomics.sub(live, 0, 1)
      clearTimeout(killTimer)
      signal.removeEventListener('abort', onAbort)
      if (failure !== undefined) reject(failure)
      // 127: the sandbox's exec could not find the tool; 126: the sandbox could not be entered.
      else if (code === 127) reject(new JobError('VIDEO_UNAVAILABLE', `${bin.split('/').pop()} is not installed`))
      else if (code !== 0 && !anyExitCode) reject(new JobError('MEDIA_UNREADABLE', 'the decoder rejected this media', `${bin} exited ${code ?? killedBy}: ${whyOf(stderr)}`))
      else {
        // The last line, if it had no newline.
        keep(line)
        resolve({ code: code ?? -1, stdout: Buffer.concat(chunks), kept: kept.join('\n'), stderr, why: whyOf(stderr) })
      }
    })
  })
}
