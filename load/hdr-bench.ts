// npm run bench:hdr: the poster of a 4K HEVC Main 10 HLG clip (an iPhone's HDR video) by thumbd against the
// ffmpeg CLI doing the same decode, seek and tone-map; the same for 1080p 8-bit SDR H.264 (bench.ts' clip);
// and the peak memory of a 60-tile storyboard of the 4K clip, 10-bit HLG against 8-bit SDR (and the 10-bit clip
// turned a quarter, as a phone held upright records), in the order 8-bit, 10-bit, 10-bit, 8-bit so neither
// always follows the other; each peak two ways and split per process (memory-split.ts). Sequential single
// requests, thumbd and the CLI alternating; medians. Clips are made once under load/.media/.
// --only-storyboard runs the storyboards alone; --skip-storyboard the posters alone.
import { execFile } from 'node:child_process'
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { parseArgs, promisify } from 'node:util'
import { MEDIA_DIR, sampleMedia } from './media.ts'
import { percentile } from './probe.ts'
import { ffmpegFrameCommand } from './raw.ts'
import { startOrigin } from './range-origin.ts'
import { describeSplit, startMemorySplit } from './memory-split.ts'
import { startServer, warmCompileCache } from './server-process.ts'

const run = promisify(execFile)
const { values: flags } = parseArgs({ options: { repeats: { type: 'string', default: '7' }, 'skip-storyboard': { type: 'boolean', default: false }, 'only-storyboard': { type: 'boolean', default: false }, remote: { type: 'boolean', default: false } } })
const repeats = Number(flags.repeats)
const say = (line: string) => process.stderr.write(`${line}\n`)

/** What a CLI user writes for an SDR poster of HDR video: the usual zscale/tonemap chain at full size, then the scale. */
export const ffmpegHdrCommand = (video: string, at: number) => [
  '-hide_banner', '-loglevel', 'error', '-ss', String(at), '-i', video, '-frames:v', '1',
  '-vf', 'zscale=t=linear:npl=203,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=mobius:param=0.7:peak=4.93:desat=0,zscale=t=bt709:m=bt709:r=tv,format=yuv420p,scale=320:-2',
  '-f', 'image2pipe', '-c:v', 'mjpeg', '-q:v', '4', 'pipe:1'
]

async function clip (file: string, args: string[]): Promise<string> {
  const path = join(MEDIA_DIR, file)
  if (await stat(path).then(s => s.size > 0, () => false)) return path
  say(`making ${file} (once)`)
  await mkdir(MEDIA_DIR, { recursive: true })
  await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args, path], { timeout: 900_000, maxBuffer: 1 << 20 })
  return path
}

const source = ['-f', 'lavfi', '-i', 'testsrc2=size=3840x2160:rate=25:duration=10,noise=alls=8:allf=t']
const hlg = await clip('hlg-4k-main10.mp4', [...source, '-vf', 'format=gbrp,setparams=color_primaries=bt709:color_trc=bt709:colorspace=gbr:range=pc,zscale=t=linear:npl=203,format=gbrpf32le,zscale=p=bt2020,zscale=t=arib-std-b67:m=2020_ncl:r=tv:npl=203,format=yuv420p10le',
  '-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'log-level=error:keyint=25', '-tag:v', 'hvc1', '-b:v', '20M',
  '-color_primaries', 'bt2020', '-color_trc', 'arib-std-b67', '-colorspace', 'bt2020nc'])
// The same stream turned a quarter by the container's display matrix, as a phone held upright records.
const hlgTurned = await clip('hlg-4k-main10-turned.mp4', ['-i', hlg, '-c', 'copy', '-metadata:s:v:0', 'rotate=90'])
const sdr4k = await clip('sdr-4k-8bit.mp4', [...source, '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-b:v', '20M', '-pix_fmt', 'yuv420p'])
const sdr = flags['only-storyboard'] ? '' : (await sampleMedia(false)).video
await warmCompileCache()
// A 60-tile storyboard of 4K HEVC takes its time on a small machine: this run measures memory, not the deadline.
const server = await startServer({ EXECUTION_MODE: 'pool', JOB_TIMEOUT_MS: '300000' })

const post = async (path: string, file: string, query: string) => {
  const res = await fetch(`${server.base}${path}${query}`, { method: 'POST', body: new Uint8Array(await readFile(file)), headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'video/mp4' } })
  await res.arrayBuffer()
  if (res.status !== 200) throw new Error(`${path}${query}: ${res.status}`)
}

/** thumbd and the CLI alternating, `repeats` times each (one warm-up each first); medians in ms. */
async function compare (name: string, video: string, cli: string[]) {
  const ours: number[] = []
  const theirs: number[] = []
  for (let i = 0; i <= repeats; i++) {
    let t = performance.now()
    await run('ffmpeg', cli, { encoding: 'buffer', maxBuffer: 1 << 26 })
    if (i > 0) theirs.push(performance.now() - t)
    t = performance.now()
    await post('/api/thumbnail', video, '?at=1')
    if (i > 0) ours.push(performance.now() - t)
  }
  const [thumbdMs, cliMs] = [percentile(ours, 50), percentile(theirs, 50)]
  say(`${name}: thumbd ${thumbdMs.toFixed(0)} ms, ffmpeg CLI ${cliMs.toFixed(0)} ms: thumbd is x${(cliMs / thumbdMs).toFixed(2)} the CLI's speed (medians of ${repeats})`)
}

async function storyboardPeak (name: string, video: string) {
  const sampler = startMemorySplit(server.pid, 20)
  const t = performance.now()
  await post('/api/storyboard', video, '?count=60')
  const { rss, honest } = sampler.stop()
  const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0)
  say(`${name}: 60-tile storyboard in ${((performance.now() - t) / 1000).toFixed(1)} s; peak sum of RSS of thumbd and its decoders ${mb(rss.bytes)} MB (${describeSplit(rss.split)}); peak of thumbd's RSS + its helpers' PSS ${mb(honest.bytes)} MB (${describeSplit(honest.split)}; MB, RSS/PSS)`)
}

/**
 * --remote: the same clip copied end to end past 2 GB (-c copy, the MP4 index at the end), served by a
 * loopback origin that answers ranges and counts what it sends; the poster at 50 % by URL.
 */
async function remotePoster () {
  const big = join(MEDIA_DIR, 'hlg-4k-main10-2gb.mp4')
  if (!(await stat(big).then(s => s.size > 0, () => false))) {
    const copies = Math.ceil(2.05 * 2 ** 30 / (await stat(hlg)).size)
    const list = join(MEDIA_DIR, 'hlg-concat.txt')
    await writeFile(list, Array.from({ length: copies }, () => `file '${hlg}'\n`).join(''))
    say(`joining ${copies} copies (once)`)
    await run('ffmpeg', ['-loglevel', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', list, '-c', 'copy', big], { timeout: 900_000 })
  }
  const size = (await stat(big)).size
  const origin = await startOrigin({ video: { path: big, size } })
  const remote = await startServer({ ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: origin.url(''), JOB_TIMEOUT_MS: '60000' })
  try {
    const times: number[] = []
    const sent: number[] = []
    for (let i = 0; i < repeats; i++) {
      const before = origin.sent()
      const t = performance.now()
      const res = await fetch(`${remote.base}/api/thumbnail`, { method: 'POST', headers: { authorization: `Bearer ${remote.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: origin.url('video'), at: '50%' }) })
      await res.arrayBuffer()
      if (res.status !== 200) throw new Error(`remote poster: ${res.status}`)
      times.push(performance.now() - t)
      sent.push(origin.sent() - before)
    }
    const [ms, bytes] = [percentile(times, 50), percentile(sent, 50)]
    say(`4K HEVC Main 10 HLG, ${(size / 2 ** 30).toFixed(2)} GiB by URL, poster at 50 %: ${(ms / 1000).toFixed(2)} s, ${(bytes / 2 ** 20).toFixed(1)} MB sent by the origin (${(100 * bytes / size).toFixed(2)} % of the file; medians of ${repeats})`)
  } finally {
    await remote.stop()
    await origin.close()
  }
}

try {
  if (flags.remote) await remotePoster()
  say(`${cpus().length} cores (${cpus()[0]?.model.trim()})`)
  if (!flags['only-storyboard']) {
    await compare('4K HEVC Main 10 HLG -> 320 px JPEG', hlg, ffmpegHdrCommand(hlg, 1))
    await compare('1080p 8-bit SDR H.264 -> 320 px JPEG', sdr, ffmpegFrameCommand(sdr, 1))
  }
  if (!flags['skip-storyboard']) {
    const [eight, ten, turned] = [['4K 8-bit SDR H.264', sdr4k], ['4K 10-bit HLG HEVC', hlg], ['4K 10-bit HLG HEVC turned 90°', hlgTurned]] as const
    for (const [name, video] of [eight, ten, turned, turned, ten, eight]) await storyboardPeak(name, video)
  }
} finally {
  await server.stop()
}
