// npm run fuzz: a long seeded mutation run against a real server, outside CI. Thousands of corruptions of
// small valid images, videos and HEIF photos, sent as upload bodies and as URL sources (a loopback static
// server), to /api/thumbnail, /api/resize and /api/hash (images also as animated WebP and GIF), the videos to
// /api/storyboard and /api/preview too. Reports the statuses, the slowest reply and the server's peak RSS;
// fails on any 5xx but 503, a reply slower than the hang bound, a decoder or temp file left behind, or a
// server that no longer answers /health.
//   [IMAGE_DECODER=sandbox] npm run fuzz -- [--count 3000] [--concurrency 4] [--seed 1] [--cases FILE]
// --cases: each case and its status, a line each in case order, to diff two runs of the same seed (say, IMAGE_DECODER
// in-process and sandbox).
import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs, promisify } from 'node:util'
import sharp from 'sharp'
import { heifSeeds, tileOf } from '../test/heif-boxes.ts'
import { mutate, prng } from './mutate.ts'
import { processTree, startSampler } from './sampler.ts'
import { startServer } from './server-process.ts'
import { startStaticServer } from './static-server.ts'

const run = promisify(execFile)
const { values } = parseArgs({ options: { count: { type: 'string', default: '3000' }, concurrency: { type: 'string', default: '4' }, seed: { type: 'string', default: '1' }, cases: { type: 'string' } } })
const [count, concurrency, seed] = [Number(values.count), Number(values.concurrency), Number(values.seed)]
const HANG_MS = 15_000

const work = await mkdtemp(join(tmpdir(), 'thumbd-fuzz-'))
const ffmpeg = (args: string[], out: string) => run('ffmpeg', ['-v', 'error', '-y', ...args, join(work, out)]).then(() => readFile(join(work, out)))
const still = ['-f', 'lavfi', '-i', 'testsrc2=size=320x240', '-frames:v', '1']
const clip = ['-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25:duration=1']
const seeds: Record<string, Buffer> = {
  jpeg: await ffmpeg(still, 'seed.jpg'),
  png: await ffmpeg(still, 'seed.png'),
  webp: await ffmpeg([...still, '-c:v', 'libwebp'], 'seed.webp'),
  gif: await ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=5:duration=1'], 'seed.gif'),
  'webp-anim': await ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=5:duration=1', '-c:v', 'libwebp', '-loop', '0'], 'seed-anim.webp'),
  avif: await sharp(await ffmpeg(still, 'avif-src.png')).avif().toBuffer(),
  mp4: await ffmpeg([...clip, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'], 'seed.mp4'),
  webm: await ffmpeg([...clip, '-c:v', 'libvpx', '-deadline', 'realtime'], 'seed.webm'),
  // Tall frames: storyboard tiles follow the aspect ratio (640x81920 at width=640), which the sprite's bounds refuse.
  tall: await ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=16x2048:rate=25:duration=1', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'], 'seed-tall.mp4'),
  // The containers and pixel formats of issue 31: 10-bit HDR, alpha, TS, PS, Ogg, ASF, FLV, audio with cover art.
  hlg: await ffmpeg([...clip, '-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'log-level=error', '-pix_fmt', 'yuv420p10le', '-color_trc', 'arib-std-b67', '-color_primaries', 'bt2020', '-colorspace', 'bt2020nc'], 'seed-hlg.mp4'),
  prores: await ffmpeg([...clip, '-c:v', 'prores_ks', '-profile:v', '4444', '-pix_fmt', 'yuva444p10le'], 'seed.mov'),
  ts: await ffmpeg([...clip, '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '5', '-f', 'mpegts'], 'seed.ts'),
  vob: await ffmpeg([...clip, '-c:v', 'mpeg2video', '-f', 'vob'], 'seed.vob'),
  ogv: await ffmpeg([...clip, '-c:v', 'libtheora', '-f', 'ogg'], 'seed.ogv'),
  wmv: await ffmpeg([...clip, '-c:v', 'wmv2', '-f', 'asf'], 'seed.wmv'),
  flv: await ffmpeg([...clip, '-c:v', 'flv', '-f', 'flv'], 'seed.flv'),
  mp3: await ffmpeg(['-f', 'lavfi', '-i', 'sine=d=1', '-i', join(work, 'seed.jpg'), '-map', '0', '-map', '1', '-c:a', 'libmp3lame', '-c:v', 'copy', '-id3v2_version', '3', '-disposition:v', 'attached_pic'], 'seed.mp3')
}
/** Storyboards of the video seeds too, with the widest tiles. */
const VIDEOS = new Set(['mp4', 'webm', 'tall'])
const STORYBOARD_QUERY = '?count=4&columns=1&width=640'
// HEIF (HEVC inside) where libheif's encoder is installed (Debian: libheif-examples); from a 64x64 one, grids
// and the hostile structures heif-decode refuses (test/heif-boxes.ts heifSeeds).
await run('heif-enc', ['-q', '50', '-o', join(work, 'seed.heic'), join(work, 'avif-src.png')]).then(async () => { seeds.heic = await readFile(join(work, 'seed.heic')) }, () => {})
await ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=64x64', '-frames:v', '1'], 'tile.png')
  .then(() => run('heif-enc', ['-q', '50', '-o', join(work, 'tile.heic'), join(work, 'tile.png')]))
  .then(async () => Object.assign(seeds, heifSeeds(tileOf(await readFile(join(work, 'tile.heic'))))), () => {})

const tmp = await mkdtemp(join(tmpdir(), 'thumbd-fuzz-tmp-'))
const urls = await mkdtemp(join(tmpdir(), 'thumbd-fuzz-urls-'))
const statics = await startStaticServer(urls)
// IMAGE_DECODER from this environment (`IMAGE_DECODER=sandbox npm run fuzz`): the stills' decoders in the sandbox.
const decoder: Record<string, string> = process.env.IMAGE_DECODER === undefined ? {} : { IMAGE_DECODER: process.env.IMAGE_DECODER }
const server = await startServer({ TMP_DIR: tmp, ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${statics.base}/`, ...decoder })
const sampler = startSampler(server.pid)
const random = prng(seed)
const names = Object.keys(seeds)
const statuses: Record<string, number> = {}
const failures: string[] = []
const cases: string[] = []
let slowest = { ms: 0, what: '' }
let next = 0

async function one (i: number) {
  const kind = names[Math.floor(random() * names.length)]!
  const body = mutate(seeds[kind]!, random)
  const video = VIDEOS.has(kind)
  const routes = video ? ['thumbnail', 'resize', 'hash', 'storyboard', 'preview'] : ['thumbnail', 'resize', 'hash']
  const route = routes[Math.floor(random() * routes.length)]!
  // Images: the still path (the route's default format) or the animated one (WebP, GIF).
  const query = route === 'storyboard' ? STORYBOARD_QUERY : route === 'preview' ? '?frames=3&width=64' : route === 'hash' || video ? '' : ['', '?format=webp', '?format=gif'][Math.floor(random() * 3)]!
  const byUrl = random() < 0.5
  const what = `#${i} ${kind} ${byUrl ? 'url' : 'body'} /api/${route}${query}`
  const headers: Record<string, string> = { authorization: `Bearer ${server.apiKey}` }
  let init: RequestInit
  if (byUrl) {
    await writeFile(join(urls, `m${i}`), body)
    init = { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ url: `${statics.base}/m${i}` }) }
  } else {
    init = { method: 'POST', headers: { ...headers, 'content-type': 'application/octet-stream' }, body: new Uint8Array(body) }
  }
  const started = performance.now()
  const res = await fetch(`${server.base}/api/${route}${query}`, { ...init, signal: AbortSignal.timeout(HANG_MS) }).catch((err: Error) => ({ status: `error ${err.name}`, text: async () => '' }))
  const ms = performance.now() - started
  await ('arrayBuffer' in res ? res.arrayBuffer() : undefined)
  const status = String(res.status)
  statuses[status] = (statuses[status] ?? 0) + 1
  cases[i] = `${what}: ${status}`
  if (ms > slowest.ms) slowest = { ms, what }
  if (!/^(2\d\d|4\d\d|503)$/.test(status)) failures.push(`${what}: ${status}`)
  if (byUrl) await rm(join(urls, `m${i}`), { force: true })
}

await Promise.all(Array.from({ length: concurrency }, async () => {
  while (next < count) {
    const i = next++
    await one(i)
    if (i % 100 === 0) process.stderr.write(`\r${i}/${count} ${JSON.stringify(statuses)}`)
  }
}))
const peakRssMB = sampler.stop().peakRssBytes / 2 ** 20
const healthy = await fetch(`${server.base}/health`).then(r => r.status === 200, () => false)
const decoders = processTree(server.pid).filter(p => /^(ffmpeg|ffprobe|heif-decode)$/.test(p.comm))
const leftovers = (await readdir(tmp, { recursive: true })).filter(name => name.includes('/'))
await server.stop()
await statics.close()
const report = { count, concurrency, seed, seeds: names, statuses, slowestMs: Math.round(slowest.ms), slowest: slowest.what, peakRssMB: Math.round(peakRssMB), healthyAfter: healthy, decodersLeft: decoders.length, tempFilesLeft: leftovers.length, failures }
process.stdout.write(`\n${JSON.stringify(report, null, 2)}\n`)
if (values.cases !== undefined) await writeFile(values.cases, cases.join('\n') + '\n')
await Promise.all([work, tmp, urls].map(dir => rm(dir, { recursive: true, force: true })))
process.exit(failures.length === 0 && healthy && decoders.length === 0 && leftovers.length === 0 ? 0 : 1)
