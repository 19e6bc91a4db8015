// native/image-decode, the sandboxed JPEG decoder (workers/jpeg-sandboxed.ts): code running inside it after it
// read its input (test/workers/tools/image-probe.c, preloaded in place of tjInitDecompress) cannot open
// /etc/passwd, connect to the server's port, exec, or read the server's memory, forked from its zygote or started
// afresh, where with the sandbox off (util-linux's limits only) it can do each; and a decoder that crashes (a real
// SIGSEGV sent to it) gives its request a 422 while a neighbour's decode goes on, nothing restarted.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import sharp from 'sharp'
import type { Sandbox } from '../../../contract/types.ts'
import { IMAGE_DECODE_FILE } from '../../../workers/tools/sandbox.ts'
import { detectTools, runTool } from '../../../workers/tools/index.ts'
import { AUTH, build } from '../../helper.ts'
import { haveJpegtran, plainGrey, scanBomb } from '../scan-bombs.ts'

const built = existsSync(IMAGE_DECODE_FILE)

async function probe (sandbox: Sandbox, dir: string): Promise<Record<string, string>> {
  const input = join(dir, 'photo.jpg')
  const { stdout, stderr } = await runTool(IMAGE_DECODE_FILE, ['--scale', '2', '--size', '64', '48', '--channels', '3', input], {
    // The probe may be read too: a tool started afresh maps it after the sandbox is entered (the zygote, before).
    signal: AbortSignal.timeout(20_000), maxStdoutBytes: 1 << 20, children: new SharedArrayBuffer(4), sandbox, reads: [input, join(dir, 'probe.so')], anyExitCode: true
  })
  const results = Object.fromEntries(stderr.trim().split('\n').filter(line => / (ok|denied)$/.test(line)).map(line => line.split(' ')))
  return { ...results, exec: stdout.toString().includes('exec ok') ? 'ok' : 'denied' }
}

test('code inside image-decode cannot open /etc/passwd, connect to the server\'s port, exec or read the server\'s memory; with the sandbox off it can', { skip: !built && 'native/image-decode not built' }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'thumbd-image-probe-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  execFileSync('cc', ['-O2', '-shared', '-fPIC', '-o', join(dir, 'probe.so'), new URL('image-probe.c', import.meta.url).pathname])
  writeFileSync(join(dir, 'photo.jpg'), await sharp({ create: { width: 64, height: 48, channels: 3, background: '#808080' } }).jpeg().toBuffer())
  // The server's port: a listener of this process (the server, for the tool: THUMBD_TOOL_OF is this pid).
  const listener = createServer(socket => socket.destroy())
  await new Promise<void>(resolve => listener.listen(0, '127.0.0.1', resolve))
  t.after(() => listener.close())
  const port = (listener.address() as { port: number }).port
  // A key in this process's memory, as API_KEYS is in the server's.
  const secret = `thumbd-key-${randomBytes(12).toString('hex')}`
  const env = { PATH: process.env.PATH!, LD_PRELOAD: join(dir, 'probe.so'), PROBE_PORT: String(port), PROBE_SECRET: secret }
  const detected = await detectTools({ ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', zygote: 'auto', env })
  assert.equal(detected.confinementMissing, false, detected.confinement)
  const limits = { addressSpaceBytes: 4 * 2 ** 30, cpuSeconds: 10 }
  const denied = { 'open-passwd': 'denied', 'connect-server-port': 'denied', 'read-server-memory': 'denied', exec: 'denied' }
  assert.deepEqual(await probe({ ...detected.sandbox, ...limits }, dir), denied, 'forked from its zygote')
  assert.deepEqual(await probe({ ...detected.sandbox, ...limits, zygote: undefined }, dir), denied, 'started afresh')
  // The sandbox off: no thumbd-sandbox-exec, no zygote (prlimit and setpriv only). Every attempt succeeds, so each
  // denial above is the sandbox's doing.
  const off = { ...detected.sandbox, ...limits, zygote: undefined, exec: undefined }
  assert.deepEqual(await probe(off, dir), { 'open-passwd': 'ok', 'connect-server-port': 'ok', 'read-server-memory': 'ok', exec: 'ok' }, 'sandbox off')
})

/** The pids of image-decode processes forked for this process (their parent: a zygote of this process). */
function decoders (): number[] {
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

test('a decoder killed by SIGSEGV mid-decode gives its request 422; a neighbour gets its thumbnail; nothing restarts', { skip: (!built || !haveJpegtran) && 'native/image-decode or jpegtran missing' }, async (t) => {
  // 32 scans of 7000x7000: a few hundred ms of decoding, time to find the process and crash it.
  const slow = scanBomb(await plainGrey(7000), 32)
  const small = await sharp({ create: { width: 640, height: 400, channels: 3, background: '#336699' } }).jpeg().toBuffer()
  const app = await build(t, { POOL_THREADS: '2' })
  const post = (body: Buffer) => app.inject({ method: 'POST', url: '/api/thumbnail?width=100', headers: { ...AUTH, 'content-type': 'image/jpeg' }, payload: body })
  assert.equal((await post(small)).statusCode, 200)
  const victim = post(slow)
  let pids: number[] = []
  const until = Date.now() + 20_000
  while ((pids = decoders()).length === 0 && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 2))
  assert.equal(pids.length, 1, 'the slow JPEG\'s decoder is a process of its own')
  const neighbour = post(small)
  process.kill(pids[0]!, 'SIGSEGV')
  const crashed = await victim
  assert.equal(crashed.statusCode, 422, crashed.body)
  assert.equal(crashed.json().code, 'THUMBD_MEDIA_UNREADABLE')
  assert.equal((await neighbour).statusCode, 200)
  assert.equal((await post(small)).statusCode, 200, 'the same server and pool answer on')
})

test('a decode past JOB_TIMEOUT_MS is killed at the deadline: 504, its process gone, the thread takes the next job at once', { skip: (!built || !haveJpegtran) && 'native/image-decode or jpegtran missing' }, async (t) => {
  // ~250 ms of CPU to decode: past a 200 ms deadline however idle the machine.
  const slow = scanBomb(await plainGrey(7000), 32)
  const small = await sharp({ create: { width: 640, height: 400, channels: 3, background: '#336699' } }).jpeg().toBuffer()
  // A deadline this short would have admission refuse the job as too long to wait for: its bound is raised.
  const app = await build(t, { POOL_THREADS: '1', JOB_TIMEOUT_MS: '200', MAX_QUEUE_WAIT_MS: '60000' })
  const post = (body: Buffer) => app.inject({ method: 'POST', url: '/api/thumbnail?width=100', headers: { ...AUTH, 'content-type': 'image/jpeg' }, payload: body })
  // The thread's first job loads sharp and starts the decoder's zygote: it may take longer than 200 ms.
  for (let tries = 0; tries < 10 && (await post(small)).statusCode !== 200; tries++);
  assert.equal((await post(small)).statusCode, 200)
  const start = performance.now()
  const job = post(slow)
  let pids: number[] = []
  const until = Date.now() + 20_000
  while ((pids = decoders()).length === 0 && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 2))
  assert.equal(pids.length, 1, 'the decode runs in a process of its own')
  const timedOut = await job
  const deadlineMs = performance.now() - start
  assert.equal(timedOut.statusCode, 504, timedOut.body)
  // The one pool thread was not held by the decode: the next job starts as soon as it is sent.
  const next = performance.now()
  assert.equal((await post(small)).statusCode, 200)
  const nextMs = performance.now() - next
  t.diagnostic(`504 after ${deadlineMs.toFixed(0)} ms; the next job answered in ${nextMs.toFixed(0)} ms`)
  assert.ok(nextMs < 500, `the next job took ${nextMs} ms`)
  assert.ok(!existsSync(`/proc/${pids[0]}`), 'the decoder was killed')
})
