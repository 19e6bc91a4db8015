// What a pool thread says to the process that starts its tools: the Node launcher (launcher-process.ts) or
// an ffmpeg zygote (native/ffmpeg-zygote.c). Both directions use the same frames, simple enough for C:
// [id u32 LE][type u8][payload length u32 LE][payload].
import { constants } from 'node:os'

/** Pool thread -> launcher. RUN: argv as NUL-terminated strings; SIGNAL: the signal number (i32). */
export const REQUEST = { run: 1, signal: 2, runSandboxed: 3 } as const

/** Launcher -> pool thread. EXIT: code (i32, -1 when killed), signal number (i32, 0 when none); ERROR: JSON. */
export const FRAME = { stdout: 1, stderr: 2, exit: 3, error: 4 } as const

export const FRAME_HEADER_BYTES = 9

export interface ExitPayload { code: number | null, signal: NodeJS.Signals | null }
export interface ErrorPayload { code?: string, message: string }

export function frameHeader (id: number, type: number, length: number): Buffer {
  const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES)
  header.writeUInt32LE(id, 0)
  header.writeUInt8(type, 4)
  header.writeUInt32LE(length, 5)
  return header
}

export const encodeFrame = (id: number, type: number, payload: Uint8Array) => Buffer.concat([frameHeader(id, type, payload.length), payload])

/** A run's request frame, given the id its helper chose. */
export type RunRequest = (id: number) => Buffer

const strings = (list: readonly string[]) => list.map(item => `${item}\0`).join('')

export const encodeRun = (id: number, argv: string[]) => encodeFrame(id, REQUEST.run, Buffer.from(strings(argv)))

/** The zygote's run in the decoder sandbox: the TCP port it may connect to (0: none) and the paths it may read ([port u32][count u32][paths]), then argv. */
export function encodeRunSandboxed (id: number, reads: readonly string[], argv: string[], connectPort = 0): Buffer {
  const fixed = Buffer.alloc(8)
  fixed.writeUInt32LE(connectPort, 0)
  fixed.writeUInt32LE(reads.length, 4)
  return encodeFrame(id, REQUEST.runSandboxed, Buffer.concat([fixed, Buffer.from(strings(reads) + strings(argv))]))
}

export function encodeSignal (id: number, signal: NodeJS.Signals): Buffer {
  const payload = Buffer.alloc(4)
  payload.writeInt32LE(constants.signals[signal])
  return encodeFrame(id, REQUEST.signal, payload)
}

export function decodeArgv (payload: Buffer): string[] {
  return payload.toString('utf8').split('\0').slice(0, -1)
}

export function decodeSignal (payload: Buffer): NodeJS.Signals | undefined {
  return signalName(payload.readInt32LE(0))
}

export function encodeExit ({ code, signal }: ExitPayload): Buffer {
  const payload = Buffer.alloc(8)
  payload.writeInt32LE(code ?? -1, 0)
  payload.writeInt32LE(signal === null ? 0 : constants.signals[signal], 4)
  return payload
}

export function decodeExit (payload: Buffer): ExitPayload {
  const code = payload.readInt32LE(0)
  return { code: code < 0 ? null : code, signal: signalName(payload.readInt32LE(4)) ?? null }
}

function signalName (number: number): NodeJS.Signals | undefined {
  return (Object.keys(constants.signals) as NodeJS.Signals[]).find(name => constants.signals[name] === number)
}

/**
 * Cuts a byte stream into frames, whatever the chunk boundaries. The payloads of `inPieces` types (a tool's
 * stdout and stderr, which are streams anyway) are handed on as the pieces of the chunks they arrived in, never
 * copied; any other payload is delivered whole, copied once into a buffer of its announced length. (It gathered
 * the pending bytes again with every chunk: a decoder's 18 MB of pixels in 64 KB frames were copied twice or more.)
 */
export class FrameReader {
  readonly #inPieces: ReadonlySet<number>
  readonly #header = Buffer.alloc(FRAME_HEADER_BYTES)
  #headerBytes = 0
  #id = 0
  #type = 0
  /** Payload bytes of the current frame still to come; undefined while a header is being read. */
  #left: number | undefined
  /** The current frame's whole payload, for a type not delivered in pieces. */
  #whole: Buffer | undefined

  constructor (inPieces: Iterable<number> = []) {
    this.#inPieces = new Set(inPieces)
  }

  push (chunk: Buffer, onFrame: (id: number, type: number, payload: Buffer) => void) {
    let at = 0
    while (at < chunk.length) {
      if (this.#left === undefined) {
        const n = Math.min(FRAME_HEADER_BYTES - this.#headerBytes, chunk.length - at)
        chunk.copy(this.#header, this.#headerBytes, at, at + n)
        this.#headerBytes += n
        at += n
        if (this.#headerBytes < FRAME_HEADER_BYTES) return
        this.#headerBytes = 0
        this.#id = this.#header.readUInt32LE(0)
        this.#type = this.#header.readUInt8(4)
        const length = this.#header.readUInt32LE(5)
        if (length === 0) {
          onFrame(this.#id, this.#type, Buffer.alloc(0))
          continue
        }
        this.#left = length
        if (!this.#inPieces.has(this.#type)) this.#whole = Buffer.allocUnsafe(length)
        continue
      }
      const piece = chunk.subarray(at, at + this.#left)
      at += piece.length
      this.#left -= piece.length
      const whole = this.#whole
      if (whole === undefined) onFrame(this.#id, this.#type, piece)
      else piece.copy(whole, whole.length - this.#left - piece.length)
      if (this.#left > 0) continue
      this.#left = undefined
      this.#whole = undefined
      if (whole !== undefined) onFrame(this.#id, this.#type, whole)
    }
  }
}
