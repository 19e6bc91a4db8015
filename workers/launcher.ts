// Starts ffmpeg/ffprobe through a small launcher process, one per thread, instead of from this process.
// Why: spawn() forks the calling process, and fork copies its page tables. The server holds 300-500 MB
// under video load, so each spawn() cost 10-20 ms (measured: 1 ms from an empty Node process, 10.6 ms
// holding 200 MB, 26 ms holding 800 MB), blocking the pool thread and half of it CPU. The launcher holds
// ~48 MB (with a warm compile cache). Hand-written: no library does this; Node has no posix_spawn/vfork.
// The tools it starts are the same sandboxed command lines, and die with it (setpriv --pdeathsig); it dies
// with this thread (setpriv again) or when its stdin closes.
import { spawn, type ChildProcess } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { FRAME, FRAME_HEADER_BYTES, type FrameType, type ErrorPayload, type ExitPayload, type LaunchRequest } from './launcher-protocol.ts'

const LAUNCHER_FILE = new URL('launcher-process.ts', import.meta.url).pathname
/** A launcher with nothing to do for this long exits (as idle pool threads do), and gives back its ~48 MB. */
let idleMs = 60_000

/** The parts of a ChildProcess that spawn.ts uses. */
export interface LaunchedTool extends EventEmitter {
  readonly stdout: EventEmitter
  readonly stderr: EventEmitter
  kill (signal: NodeJS.Signals): void
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

class Launcher {
  readonly #process: ChildProcess
  readonly #tools = new Map<number, Tool>()
  #nextId = 1
  #pending: Buffer = Buffer.alloc(0)
  #gone = false
  #idleTimer: NodeJS.Timeout | undefined

  constructor (setpriv: string | undefined) {
    const command = setpriv === undefined ? [process.execPath, LAUNCHER_FILE] : [setpriv, '--pdeathsig', 'KILL', '--', process.execPath, LAUNCHER_FILE]
    this.#process = spawn(command[0]!, command.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] })
    // It must not keep a thread or the server alive by itself.
    this.#process.unref()
    for (const stream of [this.#process.stdin, this.#process.stdout] as unknown as Array<{ unref?: () => void }>) stream.unref?.()
    this.#process.stdout!.on('data', (chunk: Buffer) => this.#receive(chunk))
    // Writes after it died fail here; its exit (below) has already failed the tools.
    this.#process.stdin!.on('error', () => {})
    this.#process.on('error', err => this.#fail(err.message))
    this.#process.on('exit', (code, signal) => this.#fail(`the launcher exited (${code ?? signal})`))
  }

  get gone () { return this.#gone }

  launch (argv: string[]): LaunchedTool {
    clearTimeout(this.#idleTimer)
    const id = this.#nextId++
    const tool = new Tool(signal => { if (this.#tools.has(id)) this.#send({ id, signal }) })
    this.#tools.set(id, tool)
    this.#send({ id, argv })
    return tool
  }

  #send (request: LaunchRequest) {
    this.#process.stdin!.write(JSON.stringify(request) + '\n')
  }

  #receive (chunk: Buffer) {
    let bytes = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk])
    while (bytes.length >= FRAME_HEADER_BYTES) {
      const length = bytes.readUInt32LE(5)
      if (bytes.length < FRAME_HEADER_BYTES + length) break
      const id = bytes.readUInt32LE(0)
      const type = bytes.readUInt8(4) as FrameType
      this.#deliver(id, type, bytes.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + length))
      bytes = bytes.subarray(FRAME_HEADER_BYTES + length)
    }
    this.#pending = bytes
  }

  #deliver (id: number, type: FrameType, payload: Buffer) {
    const tool = this.#tools.get(id)
    if (tool === undefined) return
    if (type === FRAME.stdout) tool.stdout.emit('data', payload)
    else if (type === FRAME.stderr) tool.stderr.emit('data', payload)
    else if (type === FRAME.error) {
      const { code, message } = JSON.parse(payload.toString()) as ErrorPayload
      tool.emit('error', Object.assign(new Error(message), { code }))
    } else {
      const { code, signal } = JSON.parse(payload.toString()) as ExitPayload
      this.#tools.delete(id)
      tool.emit('close', code, signal)
      if (this.#tools.size === 0) this.#idleTimer = setTimeout(() => this.#retire(), idleMs).unref()
    }
  }

  /** Closing its stdin ends it; decided here, so no tool can be sent to a launcher on its way out. */
  #retire () {
    if (this.#tools.size > 0) return
    this.#gone = true
    this.#process.stdin!.end()
  }

  /** The launcher is gone: its tools died with it (pdeathsig, or killed when its stdin closed). */
  #fail (reason: string) {
    if (this.#gone) return
    this.#gone = true
    for (const tool of this.#tools.values()) {
      tool.emit('error', new Error(reason))
      tool.emit('close', null, 'SIGKILL')
    }
    this.#tools.clear()
  }
}

let launcher: Launcher | undefined

/** Starts argv through this thread's launcher (started on first use, and again should it die). */
export function launch (argv: string[], setpriv: string | undefined): LaunchedTool {
  if (launcher === undefined || launcher.gone) launcher = new Launcher(setpriv)
  return launcher.launch(argv)
}

/** Test-only: a shorter idle time. */
export function setLauncherIdleMs (ms: number) { idleMs = ms }
