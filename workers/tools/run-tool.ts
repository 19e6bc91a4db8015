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
/** ffmpeg reports the input (duration, streams) at the start of stderr: that part is kept whole. */
const STDERR_HEAD_BYTES = 16 * 1024

export interface ToolRun {
  code: number
  stdout: Buffer
  /** The first 16 KB of stderr. */
  stderrHead: string
  /** The last 2 KB of stderr. */
  stderr: string
}

export interface ToolLimits {
  signal: AbortSignal
  maxStdoutBytes: number
  /** Shared Int32 counting live children across threads (JobSettings.children). */
  children: SharedArrayBuffer
  sandbox: Sandbox
  /** Resolve with the exit code instead of rejecting when the tool exits non-zero. */
  anyExitCode?: boolean
}

export function runTool (bin: string, args: string[], { signal, maxStdoutBytes, children, sandbox, anyExitCode = false }: ToolLimits): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted()
    const live = new Int32Array(children)
    const child = sandbox.zygote === undefined ? launch(execChain(bin, args, sandbox), sandbox.setpriv, sandbox.env) : launchInZygote(sandbox.zygote, bin, args, sandbox)
    Atomics.add(live, 0, 1)
    const chunks: Buffer[] = []
    let stdoutBytes = 0
    let stderr = ''
    let stderrHead = ''
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
      if (stderrHead.length < STDERR_HEAD_BYTES) stderrHead = (stderrHead + text).slice(0, STDERR_HEAD_BYTES)
      stderr = (stderr + text).slice(-STDERR_KEEP_BYTES)
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
      // 127: prlimit/setpriv could not find the tool to exec.
      else if (code === 127) reject(new JobError('VIDEO_UNAVAILABLE', `${bin.split('/').pop()} is not installed`))
      else if (code !== 0 && !anyExitCode) reject(new JobError('MEDIA_UNREADABLE', 'the decoder rejected this media', `${bin} exited ${code ?? killedBy}: ${stderr.trim()}`))
      else resolve({ code: code ?? -1, stdout: Buffer.concat(chunks), stderrHead, stderr })
    })
  })
}
