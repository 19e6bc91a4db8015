// native/image-decode, the sandboxed JPEG decoder (workers/image/jpeg-sandboxed.ts): code running inside it after it
// read its input (test/workers/tools/image-probe.c, preloaded in place of a libvips call) cannot open
// /etc/passwd, connect to the server's port, exec, or read the server's memory, forked from its zygote or started
// afresh, where with the sandbox off (util-linux's limits only) it can do each; and a decoder that crashes (a real
// SIGSEGV sent to it) gives its request a 422 while a neighbour's decode goes on, nothing restarted. It is opt-in
// (JPEG_DECODER=sandbox): with the default setting no JPEG is decoded in a process of its own.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import sharp from 'sharp'
import type { Sandbox } from '../../../contract/types.ts'
import { IMAGE_DECODE_FILE } from '../../../workers/tools/sandbox.ts'
import { loadConfig } from '../../../src/config.ts'
import { jobSettings } from '../../../src/jobs/settings.ts'
import { ALLOWED, DENIED, decodersSeenDuring, firstDecoders, probeDecoder, probeSetup } from './decoder-probe.ts'
import { AUTH, build, TEST_KEY } from '../../helper.ts'
import { haveJpegtran, plainGrey, scanBomb } from '../scan-bombs.ts'

const built = existsSync(IMAGE_DECODE_FILE)

async function probe (sandbox: Sandbox, dir: string): Promise<Record<string, string>> {
  return await probeDecoder(['--scale', '2', '--size', '64', '48', '--channels', '3'], join(dir, 'photo.jpg'), dir, sandbox)
}

test('code inside image-decode cannot open /etc/passwd, connect to the server\'s port, exec or read the server\'s memory; with the sandbox off it can', { skip: !built && 'native/image-decode not built' }, async (t) => {
  const { dir, zygote, afresh, off } = await probeSetup(t, 'thumbd-image-probe-')
  writeFileSync(join(dir, 'photo.jpg'), await sharp({ create: { width: 64, height: 48, channels: 3, background: '#808080' } }).jpeg().toBuffer())
  assert.deepEqual(await probe(zygote, dir), DENIED, 'forked from its zygote')
  assert.deepEqual(await probe(afresh, dir), DENIED, 'started afresh')
  // The sandbox off: no thumbd-sandbox-exec, no zygote (prlimit and setpriv only). Every attempt succeeds, so each
  // denial above is the sandbox's doing.
  assert.deepEqual(await probe(off, dir), ALLOWED, 'sandbox off')
})

test('a decoder killed by SIGSEGV mid-decode gives its request 422; a neighbour gets its thumbnail; nothing restarts', { skip: (!built || !haveJpegtran) && 'native/image-decode or jpegtran missing' }, async (t) => {
  // 32 scans of 7000x7000: a few hundred ms of decoding, time to find the process and crash it.
  const slow = scanBomb(await plainGrey(7000), 32)
  const small = await sharp({ create: { width: 640, height: 400, channels: 3, background: '#336699' } }).jpeg().toBuffer()
  const app = await build(t, { POOL_THREADS: '2', JPEG_DECODER: 'sandbox' })
  const post = (body: Buffer) => app.inject({ method: 'POST', url: '/api/thumbnail?width=100', headers: { ...AUTH, 'content-type': 'image/jpeg' }, payload: body })
  assert.equal((await post(small)).statusCode, 200)
  const victim = post(slow)
  const pids = await firstDecoders()
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
  const app = await build(t, { POOL_THREADS: '1', JOB_TIMEOUT_MS: '200', MAX_QUEUE_WAIT_MS: '60000', JPEG_DECODER: 'sandbox' })
  const post = (body: Buffer) => app.inject({ method: 'POST', url: '/api/thumbnail?width=100', headers: { ...AUTH, 'content-type': 'image/jpeg' }, payload: body })
  // The thread's first job loads sharp and starts the decoder's zygote: it may take longer than 200 ms.
  for (let tries = 0; tries < 10 && (await post(small)).statusCode !== 200; tries++);
  assert.equal((await post(small)).statusCode, 200)
  const start = performance.now()
  const job = post(slow)
  const pids = await firstDecoders()
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

test('opt-in: with the default JPEG_DECODER no JPEG is decoded in a process of its own; with sandbox it is', { skip: (!built || !haveJpegtran) && 'native/image-decode or jpegtran missing' }, async (t) => {
  // The settings every job gets: the tool is passed on only when asked for, though it is built here.
  const settingsOf = async (env: Record<string, string>) => {
    const app = await build(t, env)
    assert.ok(app.mediaTools.imageDecode !== undefined, 'native/image-decode is built and runs here')
    return jobSettings(loadConfig({ API_KEYS: TEST_KEY, ...env }), app.mediaTools, new SharedArrayBuffer(4))
  }
  const byDefault = await settingsOf({})
  assert.equal(byDefault.imageDecode, undefined, 'default: image-decode is not passed to the jobs')
  assert.equal(byDefault.jpegDecoder, 'turbojpeg', 'default: libturbojpeg in the pool thread')
  assert.ok((await settingsOf({ JPEG_DECODER: 'sandbox' })).imageDecode !== undefined)
  // Through the real app: a decode of a few hundred ms, watched for an image-decode process all along.
  const slow = scanBomb(await plainGrey(7000), 32)
  const watched = async (env: Record<string, string>) => {
    const app = await build(t, { POOL_THREADS: '1', ...env })
    const { seen, result } = await decodersSeenDuring(app.inject({ method: 'POST', url: '/api/thumbnail?width=100', headers: { ...AUTH, 'content-type': 'image/jpeg' }, payload: slow }))
    assert.equal(result.statusCode, 200)
    return seen
  }
  assert.equal(await watched({}), 0, 'default: decoded in the pool thread, no image-decode process')
  assert.equal(await watched({ JPEG_DECODER: 'sandbox' }), 1, 'sandbox: one image-decode process (the watch sees it)')
})

test('a JPEG libturbojpeg refuses goes on to the next decoder, as in the thread: corrupt data sharp reads is a 200 in the sandbox too, data it refuses a 422 in both', { skip: !built && 'native/image-decode not built' }, async (t) => {
  const jpeg = execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x480', '-frames:v', '1', '-pix_fmt', 'yuvj420p', '-q:v', '3', '-f', 'image2pipe', '-c:v', 'mjpeg', 'pipe:1'])
  /** The JPEG with 40 bytes of its scan inverted, `from` bytes before its end. */
  const flipped = (from: number) => {
    const bad = Buffer.from(jpeg)
    for (let i = bad.length - from; i < bad.length - from + 40; i++) bad[i]! ^= 0xff
    return bad
  }
  const inProcess = await build(t, { POOL_THREADS: '1' })
  const sandboxed = await build(t, { POOL_THREADS: '1', IMAGE_DECODER: 'sandbox' })
  // 60: libjpeg warns where sharp's libvips does not (200 in-process); 1000: both refuse it (422).
  for (const [from, status] of [[60, 200], [1000, 422]] as const) {
    const post = (app: typeof inProcess) => app.inject({ method: 'POST', url: '/api/thumbnail?width=200', headers: { ...AUTH, 'content-type': 'image/jpeg' }, payload: flipped(from) })
    assert.equal((await post(inProcess)).statusCode, status, `${from}: in-process`)
    const res = await post(sandboxed)
    assert.equal(res.statusCode, status, `${from}: sandbox: ${res.body}`)
  }
})
