// npm run bench: thumbd against the raw tools, same machine, same run. Prints thumbd/raw with min-median-max
// over repeats, single-request video latency against the CLI, idle RSS and peak RSS under the image load.
// Every server starts as `npm start` and the image start theirs (server-process.ts: Node flags, allocator setting).
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import { availableParallelism, cpus } from 'node:os'
import { join } from 'node:path'
import { parseArgs, promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { MEDIA_DIR, sampleMedia } from './media.ts'
import { percentile, startHealthProbe } from './probe.ts'
import { ffmpegFrameCommand, rawHash, rawSharp, rawVideo } from './raw.ts'
import { comparePeer, peerTable } from './peer.ts'
import { runShape } from './run.ts'
import { processTree, startSampler } from './sampler.ts'
import { envFlags, startServer, warmCompileCache } from './server-process.ts'

const run = promisify(execFile)
const say = (line: string) => process.stderr.write(`\r\x1b[K${line}\n`)
const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    repeats: { type: 'string' },
    duration: { type: 'string' },
    out: { type: 'string' },
    json: { type: 'boolean', default: false },
    // --peer imgproxy=PATH --photos DIR [--peer-only]: thumbd against imgproxy on real photos (peer.ts).
    peer: { type: 'string' },
    photos: { type: 'string' },
    // --width N: the thumbnail width of the peer bench (320 by default; see peer.ts for why another helps).
    width: { type: 'string' },
    'peer-only': { type: 'boolean', default: false },
    // --thumbd-route dialect|api: thumbd's URL run by imgproxy's signed GET URL (default) or POST /api (peer.ts).
    'thumbd-route': { type: 'string', default: 'dialect' },
    // --env NAME=VALUE (repeatable): added to every thumbd server's environment, e.g. IMAGE_DECODER=sandbox.
    env: { type: 'string', multiple: true, default: [] }
  }
})
const quick = flags.quick
const repeats = Number(flags.repeats ?? (quick ? 1 : 3))
const seconds = Number(flags.duration ?? (quick ? 2 : 10))
const cores = availableParallelism()
/** When the /health figure starts counting in the 200-connection run. */
const SATURATED_AFTER_MS = quick ? 500 : 2000
const outDir = flags.out ?? fileURLToPath(new URL('results/', import.meta.url))
const extraEnv = envFlags(flags.env)
/** Said in each table's first line, so two runs' outputs cannot be mixed up. */
const envNote = flags.env.length === 0 ? '' : `, thumbd with ${flags.env.join(' ')}`

const media = await sampleMedia(quick)
const hashFile = join(MEDIA_DIR, quick ? 'random-5mb.bin' : 'random-100mb.bin')
if (!(await stat(hashFile).catch(() => undefined))) await writeFile(hashFile, randomBytes((quick ? 5 : 100) * 2 ** 20))

// As in the Docker image: the compile cache is filled before the server that is measured starts.
await warmCompileCache()

if (flags.peer !== undefined) {
  const imgproxy = /^imgproxy=(.+)$/.exec(flags.peer)?.[1]
  const width = Number(flags.width ?? 320)
  const thumbdRoute = flags['thumbd-route']
  if (imgproxy === undefined || flags.photos === undefined || !Number.isInteger(width) || width < 1 || (thumbdRoute !== 'dialect' && thumbdRoute !== 'api')) {
    process.stderr.write('usage: npm run bench -- --peer imgproxy=PATH --photos DIR [--width N] [--thumbd-route dialect|api] [--peer-only] [--env NAME=VALUE ...]\n')
    process.exit(2)
  }
  const rows = await comparePeer({ imgproxy, photos: flags.photos, width, seconds, repeats, connections: 8, thumbdRoute, env: extraEnv, say })
  await mkdir(outDir, { recursive: true })
  await writeFile(join(outDir, `peer-${new Date().toISOString().replace(/[:.]/g, '-')}.json`), JSON.stringify({ machine: { cores, cpu: cpus()[0]?.model.trim() }, width, thumbdRoute, env: extraEnv, rows }, null, 2) + '\n')
  process.stdout.write([`thumbd vs imgproxy: ${cores} cores (${cpus()[0]?.model.trim()}), ${width} px, 8 connections, median of ${repeats} alternating run(s) of ${seconds} s${envNote}`, '', ...peerTable(rows, thumbdRoute), ''].join('\n'))
  if (flags['peer-only']) process.exit(0)
}
const server = await startServer({ EXECUTION_MODE: 'pool', ...extraEnv })
const median = (xs: number[]) => percentile(xs, 50)
const summary = (xs: number[]) => ({ min: Math.min(...xs), median: median(xs), max: Math.max(...xs) })

try {
  await new Promise(resolve => setTimeout(resolve, 2000))
  const idleRssMB = processTree(server.pid).reduce((sum, p) => sum + p.rssBytes, 0) / 2 ** 20
  const load = async (name: string, path: string, contentType: string, file: string, connections: number, target = server) => {
    const result = await runShape({
      shape: 'pool',
      scenario: name,
      base: target.base,
      apiKey: target.apiKey,
      pid: target.pid,
      request: { path, contentType, body: await readFile(file), describe: name },
      connections,
      durationSeconds: seconds,
      warmupRequests: cores * 2,
      onProgress: line => process.stderr.write(`\r\x1b[K${line}`),
      track: () => {}
    })
    return result
  }

  const workloads = [
    { name: `video ${quick ? 'tiny' : '1080p'} H.264 -> 320 px JPEG`, raw: () => rawVideo(media.video, cores, seconds), thumbd: () => load('video', '/api/thumbnail?at=1', 'video/mp4', media.video, cores * 2) },
    { name: `image ${quick ? 'tiny' : '15 MP'} progressive JPEG -> 320 px JPEG`, raw: () => rawSharp(media.photo, cores, seconds), thumbd: () => load('image', '/api/thumbnail', 'image/jpeg', media.photo, cores * 2) },
    { name: `image ${quick ? 'tiny' : '3 MP'} progressive JPEG -> 320 px JPEG`, raw: () => rawSharp(media.photoSmall, cores, seconds), thumbd: () => load('image-small', '/api/thumbnail', 'image/jpeg', media.photoSmall, cores * 2) },
    { name: `hash ${quick ? '5' : '100'} MB upload -> sha256`, raw: () => rawHash(hashFile, cores, seconds), thumbd: () => load('hash', '/api/hash?algorithms=sha256', 'application/octet-stream', hashFile, cores) }
  ]
  const rows = []
  for (const w of workloads) {
    const ratios: number[] = []
    const raws: number[] = []
    const ours: number[] = []
    for (let r = 0; r < repeats; r++) {
      say(`${w.name}: raw ceiling, repeat ${r + 1}/${repeats}`)
      const raw = await w.raw()
      say(`${w.name}: thumbd over HTTP, repeat ${r + 1}/${repeats}`)
      const thumbd = (await w.thumbd()).okPerSecond
      raws.push(raw)
      ours.push(thumbd)
      ratios.push(thumbd / raw)
    }
    rows.push({ workload: w.name, rawPerSecond: summary(raws), thumbdPerSecond: summary(ours), ratio: summary(ratios) })
  }

  say('single video thumbnail: thumbd vs the CLI, sequential')
  const video = await readFile(media.video)
  const cli: number[] = []
  const ours: number[] = []
  for (let i = 0; i < (quick ? 2 : 7); i++) {
    let t = performance.now()
    await run('ffmpeg', ffmpegFrameCommand(media.video, 1), { encoding: 'buffer', maxBuffer: 1 << 24 })
    cli.push(performance.now() - t)
    t = performance.now()
    const res = await fetch(`${server.base}/api/thumbnail?at=1`, { method: 'POST', body: new Uint8Array(video), headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'video/mp4' } })
    await res.arrayBuffer()
    ours.push(performance.now() - t)
  }

  // On a server of its own: what the image workload holds, not what the workloads before it left behind.
  say('peak RSS under the image workload at 8 connections, fresh server')
  const freshServer = await startServer({ EXECUTION_MODE: 'pool', ...extraEnv })
  let peakRssMB: number
  try {
    const sampler = startSampler(freshServer.pid)
    await load('image', '/api/thumbnail', 'image/jpeg', media.photo, 8, freshServer)
    peakRssMB = sampler.stop().peakRssBytes / 2 ** 20
  } finally {
    await freshServer.stop()
  }

  say('/health while 200 connections ask for thumbnails')
  // The probe that counts starts once the load is up (warm-up, client start, 200 connections and their first
  // uploads): "while saturated". Every 10 ms, so that a short run still has hundreds of probes and its p99 is
  // not simply its worst one (at 50 ms a 6 s run had ~90). The run's own probe (every 100 ms, from the start)
  // is reported beside it.
  let probe: ReturnType<typeof startHealthProbe> | undefined
  const probeLater = setTimeout(() => { probe = startHealthProbe(server.base, 10) }, SATURATED_AFTER_MS)
  const saturated = await load('image-small', '/api/thumbnail', 'image/jpeg', media.photoSmall, 200).catch(async (err: unknown) => {
    await probe?.stop().catch(() => {})
    throw err
  }).finally(() => clearTimeout(probeLater))
  if (probe === undefined) throw new Error(`the 200-connection run ended before ${SATURATED_AFTER_MS} ms`)
  const health = await probe.stop()

  const report = {
    date: new Date().toISOString(),
    machine: { cores, cpu: cpus()[0]?.model.trim(), node: process.versions.node },
    settings: { repeats, seconds, quick, env: extraEnv },
    throughput: rows,
    singleVideo: { cliMs: median(cli), thumbdMs: median(ours), ratio: median(ours) / median(cli) },
    idleRssMB,
    peakRssUnderImageLoadMB: peakRssMB,
    healthUnder200Connections: { p50Ms: health.p50Ms, p99Ms: health.p99Ms, maxMs: health.maxMs, samples: health.samples, statuses: health.statuses, replies: saturated.replies, wholeRun: saturated.health }
  }
  await mkdir(outDir, { recursive: true })
  const file = join(outDir, `bench-${report.date.replace(/[:.]/g, '-')}.json`)
  await writeFile(file, JSON.stringify(report, null, 2) + '\n')
  if (flags.json) {
    process.stdout.write(JSON.stringify(report) + '\n')
  } else {
    const f = (n: number, d = 2) => n.toFixed(d)
    const lines = [
      `thumbd bench: ${cores} cores (${report.machine.cpu}), Node ${report.machine.node}, ${repeats} repeat(s) of ${seconds} s${envNote}`,
      '',
      '| workload | raw /s (median) | thumbd /s (median) | thumbd / raw: min – median – max |',
      '|---|---:|---:|---|',
      ...rows.map(r => `| ${r.workload} | ${f(r.rawPerSecond.median, 1)} | ${f(r.thumbdPerSecond.median, 1)} | ${f(r.ratio.min)} – **${f(r.ratio.median)}** – ${f(r.ratio.max)} |`),
      '',
      `single video thumbnail: thumbd ${f(report.singleVideo.thumbdMs, 0)} ms vs ffmpeg CLI ${f(report.singleVideo.cliMs, 0)} ms (x${f(report.singleVideo.ratio)}, medians)`,
      `idle RSS ${f(idleRssMB, 0)} MB; peak RSS under the image workload at 8 connections ${f(peakRssMB, 0)} MB (fresh server)`,
      `/health under 200 connections, saturated (from ${SATURATED_AFTER_MS / 1000} s in): p50 ${f(health.p50Ms, 1)} ms, p99 ${f(health.p99Ms, 1)} ms, max ${f(health.maxMs, 1)} ms (${health.samples} probes, statuses ${JSON.stringify(health.statuses)}; thumbnail replies ${JSON.stringify(saturated.replies)})`,
      `/health over the whole run, ramp included: p50 ${f(saturated.health.p50Ms, 1)} ms, p99 ${f(saturated.health.p99Ms, 1)} ms, max ${f(saturated.health.maxMs, 1)} ms (${saturated.health.samples} probes)`,
      '',
      `written: ${file}`
    ]
    process.stdout.write(lines.join('\n') + '\n')
  }
} finally {
  await server.stop()
}
