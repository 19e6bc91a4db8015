// The Node launcher: a small process that starts ffmpeg/ffprobe for one pool thread (see launcher.ts for
// why), used where the ffmpeg zygote is not (native/ffmpeg-zygote.c). Requests arrive on stdin and what
// the tools say goes back on stdout, both as frames (launcher-protocol.ts). When stdin closes (the thread
// or the server is gone) every tool is killed and the launcher exits. Its one argument is the tools'
// whole environment, as JSON (launcher.ts): nothing else of the server's reaches a decoder.
import { spawn, type ChildProcess } from 'node:child_process'
import { FRAME, FrameReader, REQUEST, decodeArgv, decodeSignal, encodeExit, encodeFrame, frameHeader } from './launcher-protocol.ts'

const toolEnv = JSON.parse(process.argv[2] ?? '{}') as Record<string, string>
const tools = new Map<number, ChildProcess>()

function relay (id: number, type: number, chunk: Buffer) {
  // Header and bytes written apart: the tool's output is not copied again.
  process.stdout.write(frameHeader(id, type, chunk.length))
  process.stdout.write(chunk)
}

function start (id: number, [bin, ...args]: string[]) {
  const tool = spawn(bin!, args, { stdio: ['ignore', 'pipe', 'pipe'], env: toolEnv })
  tools.set(id, tool)
  tool.stdout.on('data', (chunk: Buffer) => relay(id, FRAME.stdout, chunk))
  tool.stderr.on('data', (chunk: Buffer) => relay(id, FRAME.stderr, chunk))
  tool.on('error', (err: NodeJS.ErrnoException) => process.stdout.write(encodeFrame(id, FRAME.error, Buffer.from(JSON.stringify({ code: err.code, message: err.message })))))
  tool.on('close', (code, signal) => {
    tools.delete(id)
    process.stdout.write(encodeFrame(id, FRAME.exit, encodeExit({ code, signal })))
  })
}

const requests = new FrameReader()
process.stdin.on('data', (chunk: Buffer) => requests.push(chunk, (id, type, payload) => {
  if (type === REQUEST.run) start(id, decodeArgv(payload))
  else if (type === REQUEST.signal) tools.get(id)?.kill(decodeSignal(payload))
}))
process.stdin.on('end', () => {
  for (const tool of tools.values()) tool.kill('SIGKILL')
  process.exit(0)
})
