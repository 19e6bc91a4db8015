// What the confinement and crash tests of native/image-decode share (image-decode.test.ts for its JPEG path,
// still-decode.test.ts for PNG, WebP and GIF): the probe's run and what it reports, and the decoder processes of
// this test process.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import type { Sandbox } from '../../../contract/types.ts'
import { IMAGE_DECODE_FILE } from '../../../workers/tools/sandbox.ts'
import { detectTools, runTool } from '../../../workers/tools/index.ts'

/** What each probe attempt gives inside the sandbox, and with it off. */
export const DENIED = { 'open-passwd': 'denied', 'connect-server-port': 'denied', 'read-server-memory': 'denied', exec: 'denied' }
export const ALLOWED = { 'open-passwd': 'ok', 'connect-server-port': 'ok', 'read-server-memory': 'ok', exec: 'ok' }

/**
 * A folder with the probe built (test/workers/tools/image-probe.c, preloaded in place of each library's first call),
 * a listener of this process for it to connect to (the server's port: THUMBD_TOOL_OF is this pid), a key in this
 * process's memory (as API_KEYS is in the server's), and the three sandboxes to run the decoder in: forked from its
 * zygote, started afresh, and off (prlimit and setpriv only).
 */
export async function probeSetup (t: TestContext, prefix: string): Promise<{ dir: string, zygote: Sandbox, afresh: Sandbox, off: Sandbox }> {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  execFileSync('cc', ['-O2', '-shared', '-fPIC', '-o', join(dir, 'probe.so'), new URL('image-probe.c', import.meta.url).pathname])
  const listener = createServer(socket => socket.destroy())
  await new Promise<void>(resolve => listener.listen(0, '127.0.0.1', resolve))
  t.after(() => listener.close())
  const port = (listener.address() as { port: number }).port
  const secret = `thumbd-key-${randomBytes(12).toString('hex')}`
  const env = { PATH: process.env.PATH!, LD_PRELOAD: join(dir, 'probe.so'), PROBE_PORT: String(port), PROBE_SECRET: secret }
  const detected = await detectTools({ ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', zygote: 'auto', env })
  assert.equal(detected.confinementMissing, false, detected.confinement)
  const zygote = { ...detected.sandbox, addressSpaceBytes: 4 * 2 ** 30, cpuSeconds: 10 }
  return { dir, zygote, afresh: { ...zygote, zygote: undefined }, off: { ...zygote, zygote: undefined, exec: undefined } }
}

/**
 * image-decode run on `input` with the probe (DIR/probe.so, preloaded by the caller's env) inside: what each of its
 * attempts gave (open-passwd, connect-server-port, read-server-memory: ok or denied) and whether it could exec.
 */
export async function probeDecoder (args: string[], input: string, dir: string, sandbox: Sandbox): Promise<Record<string, string>> {
  const { stdout, stderr } = await runTool(IMAGE_DECODE_FILE, [...args, input], {
    // The probe may be read too: a tool started afresh maps it after the sandbox is entered (the zygote, before).
    signal: AbortSignal.timeout(20_000), maxStdoutBytes: 1 << 22, children: new SharedArrayBuffer(4), sandbox, reads: [input, join(dir, 'probe.so')], anyExitCode: true
  })
  const results = Object.fromEntries(stderr.trim().split('\n').filter(line => / (ok|denied)$/.test(line)).map(line => line.split(' ')))
  return { ...results, exec: stdout.toString().includes('exec ok') ? 'ok' : 'denied' }
}

/** The pids of image-decode processes forked for this process (their parent or grandparent: this process). */
export function imageDecoders (): number[] {
  const found: number[] = []
  for (const pid of readdirSync('/proc').filter(p => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      if (!stat.includes('(image-decode)')) continue
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      const grandparent = Number(readFileSync(`/proc/${parent}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])
      if (parent === process.pid || grandparent === process.pid) found.push(Number(pid))
    } catch {}
  }
  return found
}

/** The image-decode processes of this process as soon as one is seen (/proc read every millisecond), within `withinMs`; none after it. */
export async function firstDecoders (withinMs = 20_000): Promise<number[]> {
  const until = Date.now() + withinMs
  let pids: number[] = []
  while ((pids = imageDecoders()).length === 0 && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 1))
  return pids
}

/**
 * The most image-decode processes seen at once while `reply` was pending (/proc read every millisecond), the most
 * bytes one of them was seen to have written (its /proc io wchar: a header read writes tens, a decode its pixels),
 * and the reply.
 */
export async function decodersSeenDuring<T> (reply: Promise<T>): Promise<{ seen: number, written: number, result: T }> {
  let seen = 0
  let written = 0
  // An object, so the loop's condition reads what the callback sets.
  const job = { done: false }
  const settled = reply.finally(() => { job.done = true })
  while (!job.done) {
    const pids = imageDecoders()
    seen = Math.max(seen, pids.length)
    for (const pid of pids) {
      try { written = Math.max(written, Number(/^wchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0)) } catch {}
    }
    await new Promise(resolve => setTimeout(resolve, 1))
  }
  return { seen, written, result: await settled }
}

/** More bytes than a header read (--info: 48 and the profile) writes: a decoder writing this much wrote pixels. */
export const PIXELS_WRITTEN = 2 ** 16

/**
 * `request` watched as decodersSeenDuring() watches it, made again (at most `tries` times in all) until a decoder
 * is seen having written pixels: /proc is read every millisecond, so a short decode can end between two reads.
 * The attempt that saw them (else the last): its reply is the one to check, so a path that only sometimes
 * decodes here cannot pass on another attempt's evidence.
 */
export async function pixelsDecodedDuring<T> (request: () => Promise<T>, tries = 5): Promise<{ seen: number, written: number, result: T }> {
  let attempt = await decodersSeenDuring(request())
  for (let i = 1; i < tries && attempt.written <= PIXELS_WRITTEN; i++) attempt = await decodersSeenDuring(request())
  return attempt
}
