// The launcher: a small process that starts ffmpeg/ffprobe for one pool thread (see launcher.ts for why).
// Requests arrive on stdin as JSON lines: { id, argv } starts a tool, { id, signal } signals it. Everything
// the tools say goes back on stdout as frames: [id u32][type u8][length u32][payload].
// When stdin closes (the thread or the server is gone) every tool is killed and the launcher exits.
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { FRAME, FRAME_HEADER_BYTES, type FrameType, type LaunchRequest } from './launcher-protocol.ts'

const tools = new Map<number, ChildProcess>()

function frame (id: number, type: FrameType, payload: Uint8Array) {
  const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES)
  header.writeUInt32LE(id, 0)
  header.writeUInt8(type, 4)
  header.writeUInt32LE(payload.length, 5)
  process.stdout.write(header)
  if (payload.length > 0) process.stdout.write(payload)
}

function start (id: number, [bin, ...args]: string[]) {
  const tool = spawn(bin!, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  tools.set(id, tool)
  tool.stdout.on('data', (chunk: Buffer) => frame(id, FRAME.stdout, chunk))
  tool.stderr.on('data', (chunk: Buffer) => frame(id, FRAME.stderr, chunk))
  tool.on('error', (err: NodeJS.ErrnoException) => frame(id, FRAME.error, Buffer.from(JSON.stringify({ code: err.code, message: err.message }))))
  tool.on('close', (code, signal) => {
    tools.delete(id)
    frame(id, FRAME.exit, Buffer.from(JSON.stringify({ code, signal })))
  })
}

const lines = createInterface({ input: process.stdin })
lines.on('line', line => {
  const request = JSON.parse(line) as LaunchRequest
  if ('argv' in request) start(request.id, request.argv)
  else tools.get(request.id)?.kill(request.signal)
})
lines.on('close', () => {
  for (const tool of tools.values()) tool.kill('SIGKILL')
  process.exit(0)
})
