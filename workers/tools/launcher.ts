// Starts ffmpeg/ffprobe through a helper process per pool thread instead of from this process: an ffmpeg
// zygote (zygote.ts) where it is built, else a small Node launcher (launcher-process.ts).
// Why a helper at all: spawn() forks the calling process, and fork copies its page tables. The server holds
// 300-500 MB under video load, so each spawn() cost 10-20 ms (measured: 1 ms from an empty Node process,
// 10.6 ms holding 200 MB, 26 ms holding 800 MB), blocking the pool thread and half of it CPU. The Node
// launcher holds ~48 MB (with a warm compile cache). Hand-written: no library does this; Node has no
// posix_spawn/vfork. Either way the tools get the same sandbox and die with their helper, and the helper
// dies with this thread (setpriv --pdeathsig) or when its stdin closes.
import { spawn, type ChildProcess } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { fileURLToPath } from 'node:url'
import { FRAME, FrameReader, decodeExit, encodeRun, encodeSignal, type ErrorPayload, type RunRequest } from './launcher-protocol.ts'
import { withParentDeath } from './sandbox.ts'

const LAUNCHER_FILE = fileURLToPath(new URL('launcher-process.ts', import.meta.url))
/** A helper with nothing to do for this long exits (as idle pool threads do), and gives back its memory. */
let idleMs = 60_000

/** The parts of a ChildProcess that spawn.ts uses. */
export interface LaunchedTool extends EventEmitter {
  readonly stdout: EventEmitter
  readonly stderr: EventEmitter
  kill (signal: NodeJS.Signals): void
}

/** How to start a helper, and how many tools it may start before a fresh one takes over. */
export interface HelperSpec {
  /** For messages: "launcher", "ffmpeg zygote". */
  name: string
  command: string[]
  env?: NodeJS.ProcessEnv
  maxRuns: number
}

class Tool extends EventEmitter implements LaunchedTool {
  readonly stdout = new EventEmitter()
  readonly stderr = new EventEmitter()
  readonly #signal: (signal: NodeJS.Signals) => void

  constructor (signal: (signal: NodeJS.Signals) => void) {
    super()
    this.#signal = signal
  }

  kill (signal: NodeJS.Signals) { this.#signal(signal) }
}

class Helper {
  readonly #process: ChildProcess
  readonly #tools = new Map<number, Tool>()
  readonly #frames = new FrameReader([FRAME.stdout, FRAME.stderr])
  readonly #maxRuns: number
  readonly #name: string
  #runs = 0
  /** False once it is retiring or dead: the next tool goes to a new helper. */
  #accepting = true
  #idleTimer: NodeJS.Timeout | undefined

  constructor ({ name, command, env, maxRuns }: HelperSpec) {
    this.#name = name
    this.#maxRuns = maxRuns
    this.#process = spawn(command[0]!, command.slice(1), { stdio: ['pipe', 'pipe', 'inherit'], env })
    // It must not keep a thread or the server alive by itself.
    this.#process.unref()
    for (const stream of [this.#process.stdin, this.#process.stdout] as unknown as Array<{ unref?: () => void }>) stream.unref?.()
    this.#process.stdout!.on('data', (chunk: Buffer) => this.#frames.push(chunk, (id, type, payload) => this.#deliver(id, type, payload)))
    // Writes after it died fail here; its exit (below) has already failed the tools.
    this.#process.stdin!.on('error', () => {})
    this.#process.on('error', err => this.#fail(err.message))
    this.#process.on('exit', (code, signal) => this.#fail(`the ${this.#name} exited (${code ?? signal})`))
  }

  get accepting () { return this.#accepting }

  launch (request: RunRequest): LaunchedTool {
    clearTimeout(this.#idleTimer)
    const id = ++this.#runs
    const tool = new Tool(signal => { if (this.#tools.has(id)) this.#process.stdin!.write(encodeSignal(id, signal)) })
    this.#tools.set(id, tool)
    this.#process.stdin!.write(request(id))
    if (this.#runs >= this.#maxRuns) this.#accepting = false
    return tool
  }

  #deliver (id: number, type: number, payload: Buffer) {
    const tool = this.#tools.get(id)
    if (tool === undefined) return
    if (type === FRAME.stdout) tool.stdout.emit('data', payload)
    else if (type === FRAME.stderr) tool.stderr.emit('data', payload)
    else if (type === FRAME.error) {
      const { code, message } = JSON.parse(payload.toString()) as ErrorPayload
      tool.emit('error', Object.assign(new Error(message), { code }))
    } else if (type === FRAME.exit) {
      const { code, signal } = decodeExit(payload)
      this.#tools.delete(id)
      tool.emit('close', code, signal)
      if (this.#tools.size > 0) return
      if (this.#accepting) this.#idleTimer = setTimeout(() => this.#retire(), idleMs).unref()
      else this.#retire()
    }
  }

  /** Closing its stdin ends it; decided here, so no tool can be sent to a helper on its way out. */
  #retire () {
    if (this.#tools.size > 0) return
    this.#accepting = false
    this.#process.stdin!.end()
  }

  /** The helper is gone: its tools died with it (pdeathsig, or killed when its stdin closed). */
  #fail (reason: string) {
    this.#accepting = false
    for (const tool of this.#tools.values()) {
      tool.emit('error', new Error(reason))
      tool.emit('close', null, 'SIGKILL')
    }
    this.#tools.clear()
  }
}

const helpers = new Map<string, Helper>()

/** Sends a run through this thread's helper `key` (started on first use, and again should it die or retire). */
export function launchWith (key: string, spec: () => HelperSpec, request: RunRequest): LaunchedTool {
  let helper = helpers.get(key)
  if (helper === undefined || !helper.accepting) {
    helper = new Helper(spec())
    helpers.set(key, helper)
  }
  return helper.launch(request)
}

/**
 * Starts a (sandboxed) command line through this thread's Node launcher, with `env` as the tool's whole
 * environment. The launcher keeps this process's (its compile cache, say); only its tools get `env`.
 */
export function launch (argv: string[], setpriv: string | undefined, env: Readonly<Record<string, string>>): LaunchedTool {
  return launchWith('node', () => ({ name: 'launcher', command: withParentDeath(setpriv, [process.execPath, LAUNCHER_FILE, JSON.stringify(env)]), maxRuns: Infinity }), id => encodeRun(id, argv))
}

/** Test-only: a shorter idle time. */
export function setLauncherIdleMs (ms: number) { idleMs = ms }
