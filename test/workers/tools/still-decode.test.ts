// native/image-decode's still decoders (IMAGE_DECODER=sandbox, workers/image/still-sandboxed.ts), as image-decode.test.ts
// holds its JPEG decoder: code running inside it after it read a JPEG, PNG, WebP, GIF or AVIF's header
// (test/workers/tools/image-probe.c, preloaded in place of the libvips call that follows) cannot open /etc/passwd, connect to the server's port, exec, or
// read the server's memory, forked from its zygote or started afresh, where with the sandbox off it can do each; a
// decoder that crashes (a real SIGSEGV sent to it) gives its request a 422 while a neighbour gets its thumbnail;
// a decode past JOB_TIMEOUT_MS is killed at the deadline; with IMAGE_DECODER=in-process no still is decoded in a
// process of its own (so none of this holds there).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import sharp from 'sharp'
import type { Sandbox } from '../../../contract/types.ts'
import { IMAGE_DECODE_FILE } from '../../../workers/tools/sandbox.ts'
import { ALLOWED, DENIED, decodersSeenDuring, firstDecoders, probeDecoder, probeSetup } from './decoder-probe.ts'
import { AUTH, build } from '../../helper.ts'

const stills = existsSync(IMAGE_DECODE_FILE) && execFileSyncStatus([IMAGE_DECODE_FILE, '--still', 'png']) === 64
const FORMATS = ['png', 'webp', 'gif'] as const
/** What --still takes: the confinement is probed after each of its loaders has read its input's header. */
const PROBED = ['jpeg', 'png', 'webp', 'gif', 'avif'] as const

function execFileSyncStatus ([bin, ...args]: string[]): number {
  try {
    execFileSync(bin!, args, { stdio: 'ignore' })
    return 0
  } catch (err) {
    return (err as { status: number }).status
  }
}

/** A noisy picture (ffmpeg's testsrc2), in the format: slow enough to decode to be caught at it. WebP by sharp (ffmpeg's muxer cannot fix its RIFF size on a pipe). */
async function noisy (format: string, side: number): Promise<Buffer> {
  const codec = { png: ['-c:v', 'png', '-f', 'image2pipe'], webp: ['-c:v', 'png', '-f', 'image2pipe'], gif: ['-f', 'gif'] }[format]!
  const made = execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc2=size=${side}x${side}:rate=1`, '-frames:v', '1', '-vf', 'noise=alls=40:allf=u', ...codec, 'pipe:1'], { maxBuffer: 1 << 30 })
  return format === 'webp' ? await sharp(made).webp({ quality: 90, effort: 0 }).toBuffer() : made
}

async function probe (sandbox: Sandbox, dir: string, format: string): Promise<Record<string, string>> {
  return await probeDecoder(['--still', format, '--max-pixels', '1000000', '--max-frames', '1000', '--frame-budget', '4000000'], join(dir, `picture.${format}`), dir, sandbox)
}

test('code inside image-decode, after it read a JPEG, PNG, WebP, GIF or AVIF (--still, --info), cannot open /etc/passwd, connect to the server\'s port, exec or read the server\'s memory; with the sandbox off it can', { skip: !stills && 'native/image-decode not built with its still decoders' }, async (t) => {
  const { dir, zygote, afresh, off } = await probeSetup(t, 'thumbd-still-probe-')
  const picture = sharp({ create: { width: 64, height: 48, channels: 3, background: '#808080' } })
  writeFileSync(join(dir, 'picture.png'), await picture.clone().png().toBuffer())
  writeFileSync(join(dir, 'picture.webp'), await picture.clone().webp().toBuffer())
  writeFileSync(join(dir, 'picture.gif'), await picture.clone().gif().toBuffer())
  writeFileSync(join(dir, 'picture.jpeg'), await picture.clone().jpeg().toBuffer())
  writeFileSync(join(dir, 'picture.avif'), await picture.clone().avif({ effort: 0 }).toBuffer())
  for (const format of PROBED) {
    assert.deepEqual(await probe(zygote, dir, format), DENIED, `${format}: forked from its zygote`)
    assert.deepEqual(await probe(afresh, dir, format), DENIED, `${format}: started afresh`)
    // The sandbox off (prlimit and setpriv only): every attempt succeeds, so each denial above is the sandbox's doing.
    assert.deepEqual(await probe(off, dir, format), ALLOWED, `${format}: sandbox off`)
    // --info (/api/info, a header the JavaScript reader leaves): the probe runs once libvips found the loader and
    // read the header.
    const info = async (sandbox: Sandbox) => await probeDecoder(['--info', '--max-pixels', '1000000'], join(dir, `picture.${format}`), dir, sandbox)
    assert.deepEqual(await info(zygote), DENIED, `${format} --info: forked from its zygote`)
    assert.deepEqual(await info(afresh), DENIED, `${format} --info: started afresh`)
    assert.deepEqual(await info(off), ALLOWED, `${format} --info: sandbox off`)
  }
})

test('a still decoder killed by SIGSEGV mid-decode gives its request 422; a neighbour gets its thumbnail; nothing restarts', { skip: !stills && 'native/image-decode not built with its still decoders' }, async (t) => {
  const small = await sharp({ create: { width: 640, height: 400, channels: 3, background: '#336699' } }).png().toBuffer()
  const app = await build(t, { POOL_THREADS: '2', IMAGE_DECODER: 'sandbox' })
  const post = (body: Buffer) => app.inject({ method: 'POST', url: '/api/thumbnail?width=100', headers: { ...AUTH, 'content-type': 'application/octet-stream' }, payload: body })
  assert.equal((await post(small)).statusCode, 200)
  for (const format of FORMATS) {
    const slow = await noisy(format, 4000)
    const victim = post(slow)
    const pids = await firstDecoders()
    assert.equal(pids.length, 1, `${format}: the slow picture's decoder is a process of its own`)
    const neighbour = post(small)
    process.kill(pids[0]!, 'SIGSEGV')
    const crashed = await victim
    assert.equal(crashed.statusCode, 422, `${format}: ${crashed.body}`)
    assert.equal(crashed.json().code, 'THUMBD_MEDIA_UNREADABLE')
    assert.equal((await neighbour).statusCode, 200, `${format}: the neighbour`)
    assert.equal((await post(slow)).statusCode, 200, `${format}: the same picture decodes when left alone`)
  }
})

test('a still decode past JOB_TIMEOUT_MS is killed at the deadline: 504, its process gone, the thread takes the next job at once', { skip: !stills && 'native/image-decode not built with its still decoders' }, async (t) => {
  const small = await sharp({ create: { width: 640, height: 400, channels: 3, background: '#336699' } }).png().toBuffer()
  // A deadline the upload, the queue and the decoder's fork meet even on a loaded machine (at 150 ms they did not:
  // the 504 came before any decoder started).
  const app = await build(t, { POOL_THREADS: '1', JOB_TIMEOUT_MS: '1000', MAX_QUEUE_WAIT_MS: '60000', IMAGE_DECODER: 'sandbox' })
  const post = (body: Buffer) => app.inject({ method: 'POST', url: '/api/thumbnail?width=100', headers: { ...AUTH, 'content-type': 'application/octet-stream' }, payload: body })
  for (let tries = 0; tries < 10 && (await post(small)).statusCode !== 200; tries++);
  for (const format of FORMATS) {
    // No picture within the pixel limit outlasts such a deadline (giflib decodes 50 MP of noise in ~0.3 s of CPU),
    // so the decoder, once seen, is stopped, as one stuck in a loop would be: only the deadline's kill ends it
    // (SIGTERM waits on a stopped process; the SIGKILL that follows does not).
    const slow = await noisy(format, 4000)
    const job = post(slow)
    const pids = await firstDecoders()
    assert.equal(pids.length, 1, `${format}: the decode runs in a process of its own`)
    process.kill(pids[0]!, 'SIGSTOP')
    const timedOut = await job
    assert.equal(timedOut.statusCode, 504, `${format}: ${timedOut.body}`)
    const next = performance.now()
    assert.equal((await post(small)).statusCode, 200)
    const nextMs = performance.now() - next
    t.diagnostic(`${format}: the next job answered in ${nextMs.toFixed(0)} ms`)
    assert.ok(nextMs < 500, `${format}: the next job took ${nextMs} ms`)
    assert.ok(!existsSync(`/proc/${pids[0]}`), `${format}: the decoder was killed`)
  }
})

test('opt-in: with IMAGE_DECODER=in-process no still is decoded in a process of its own; with sandbox each is', { skip: !stills && 'native/image-decode not built with its still decoders' }, async (t) => {
  const watched = async (env: Record<string, string>, body: Buffer) => {
    const app = await build(t, { POOL_THREADS: '1', ...env })
    const { seen, result } = await decodersSeenDuring(app.inject({ method: 'POST', url: '/api/thumbnail?width=100', headers: { ...AUTH, 'content-type': 'application/octet-stream' }, payload: body }))
    assert.equal(result.statusCode, 200)
    return seen
  }
  for (const format of FORMATS) {
    const body = await noisy(format, 3000)
    assert.equal(await watched({}, body), 0, `${format}, default: decoded in the pool thread, no image-decode process`)
    assert.equal(await watched({ IMAGE_DECODER: 'sandbox' }, body), 1, `${format}, sandbox: one image-decode process (the watch sees it)`)
  }
})
