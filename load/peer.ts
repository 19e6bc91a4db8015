// npm run bench -- --peer imgproxy=PATH --photos DIR: thumbd against imgproxy, the image service a user
// would otherwise pick, on the same photos from the same loopback static server, alternating runs on the same
// cores. The photos: every still JPEG, PNG, WebP, AVIF, HEIC/HEIF and GIF in DIR (peer-photos.ts); the table
// names each one's format and sums the ratios up per format. Each photo is thumbnailed to 320 px (or --width) at quality 80, JPEG and WebP out: by thumbd from
// its URL, by thumbd from an upload, and by imgproxy from its signed GET URL. thumbd's URL run is by default
// the very signed GET URL imgproxy gets (its dialect, same key and salt: the same request and, with
// JPEG_SHRINK=auto, the same decode scale); --thumbd-route api sends POST /api/thumbnail JSON instead. imgproxy is built by the user
// from its public source (docs/benchmarks.md, "Photos against imgproxy", says how); nothing of it is in this repository.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fire, type UniqueUrls } from './cannon.ts'
import { listPeerPhotos, PHOTO_EXTENSIONS } from './peer-photos.ts'
import { CLOCK_TICKS_PER_SECOND, processTree } from './sampler.ts'
import { freePort, startServer } from './server-process.ts'
import { startStaticServer } from './static-server.ts'

export interface PeerSettings {
  imgproxy: string
  photos: string
  /**
   * Thumbnail width. The two servers shrink a JPEG on load by different rules: imgproxy by the largest of
   * 8/4/2 that the reduction allows, sharp by one step less when the reduction's integer part equals it (a
   * 2560 px photo to 320 px: 1/8 against 1/4, ~4 ms more decode at 4 MP). At a width where both pick the same
   * factor (2560 to 256 px: 1/8 both) the ratio shows the rest.
   */
  width: number
  seconds: number
  repeats: number
  connections: number
  /** How thumbd gets the URL photo: imgproxy's signed GET URL (`dialect`) or POST /api/thumbnail JSON (`api`). */
  thumbdRoute: ThumbdRoute
  /** Added to thumbd's environment (bench.ts's --env), e.g. IMAGE_DECODER=sandbox; imgproxy's is left as it is. */
  env: Record<string, string>
  say: (line: string) => void
}

export type ThumbdRoute = 'dialect' | 'api'

/** Per contender: ok/s, and the CPU its server (with its threads and child processes) spent per 200. */
export interface PeerFigures { okPerSecond: number, cpuMsPerOk: number }

export interface PeerRow {
  photo: string
  /** The photo's format, by its bytes (jpeg, png, webp, avif, heic, gif). */
  input: string
  megapixels: number
  /** The thumbnail's format. */
  format: string
  thumbdUrl: PeerFigures
  thumbdUpload: PeerFigures
  imgproxy: PeerFigures
  /** thumbd by URL over imgproxy, in ok/s: above 1, thumbd is faster. */
  ratio: number
  /** thumbd by URL over imgproxy, in CPU per thumbnail: below 1, thumbd does the same work for less. */
  cpuRatio: number
}

async function startImgproxy (binary: string, key: string, salt: string) {
  const port = await freePort()
  const child = spawn(binary, [], {
    env: { PATH: process.env.PATH, IMGPROXY_BIND: `127.0.0.1:${port}`, IMGPROXY_KEY: key, IMGPROXY_SALT: salt, IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES: 'true', IMGPROXY_LOG_LEVEL: 'error' },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; !(await fetch(`${base}/health`).then(r => r.ok, () => false)); i++) {
    if (i > 300 || child.exitCode !== null) throw new Error(`imgproxy (${binary}) did not start`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  const running = () => child.exitCode === null && child.signalCode === null
  return {
    base,
    pid: child.pid!,
    /** Throws if imgproxy is gone (it crashed once here, in glibc's malloc): a dead peer is not a slow one. */
    checkAlive: () => { if (!running()) throw new Error(`imgproxy (${binary}) exited during the run (${child.signalCode ?? child.exitCode}); its stderr is above`) },
    stop: async () => {
      if (!running()) return
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await exited
    }
  }
}

export async function comparePeer ({ imgproxy, photos, width, seconds, repeats, connections, thumbdRoute, env, say }: PeerSettings): Promise<PeerRow[]> {
  const { photos: set, skipped } = await listPeerPhotos(photos)
  for (const { name, why } of skipped) say(`left out ${name}: ${why}`)
  if (set.length === 0) throw new Error(`no still photos (${PHOTO_EXTENSIONS.join(', ')}) in ${photos}`)
  say(`photos: ${[...countBy(set.map(p => p.format))].map(([format, n]) => `${n} ${format}`).join(', ')}`)
  const statics = await startStaticServer(photos)
  // JPEG_DECODER and JPEG_SHRINK pass through, to measure both decoders and both scales against the same peer.
  const jpeg = Object.fromEntries(['JPEG_DECODER', 'JPEG_SHRINK'].flatMap(name => process.env[name] === undefined ? [] : [[name, process.env[name]!]]))
  // One key and salt for both servers: thumbd's dialect run sends the URL imgproxy gets, byte for byte.
  const [key, salt] = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')]
  const thumbd = await startServer({ EXECUTION_MODE: 'pool', ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${statics.base}/`, URL_SIGNING_KEYS: key, URL_SIGNING_SALTS: salt, ...jpeg, ...env })
  const peer = await startImgproxy(imgproxy, key, salt)
  say(`thumbd's URL run: ${thumbdRoute === 'dialect' ? 'GET /i/... (imgproxy\'s signed URL)' : 'POST /api/thumbnail (JSON)'}`)
  // CPU per thumbnail, besides ok/s: on 2 shared cores a rate moves with whatever else runs (the client, the
  // origin, the VM's neighbours), the CPU each server spends per answer much less.
  const cpuSeconds = (pid: number) => processTree(pid).reduce((sum, s) => sum + s.cpuTicks, 0) / CLOCK_TICKS_PER_SECOND
  const measure = async (pid: number, url: string, method: 'GET' | 'POST', headers: Record<string, string>, body: Buffer, unique?: UniqueUrls): Promise<PeerFigures> => {
    const cpuBefore = cpuSeconds(pid)
    const result = await fire({ url, method, headers, body, connections, durationSeconds: seconds, unique }).result
    const ok = result.statusCodeStats['200']?.count ?? 0
    return { okPerSecond: ok / result.duration, cpuMsPerOk: ok === 0 ? Infinity : (cpuSeconds(pid) - cpuBefore) * 1000 / ok }
  }
  const rows: PeerRow[] = []
  try {
    for (const { name, format: input, mime, width: photoWidth, height: photoHeight } of set) {
      const photo = await readFile(join(photos, name))
      // The photo's sides are photoWidth and photoHeight: `width` is the thumbnail's.
      for (const format of ['jpeg', 'webp']) {
        const source = `${statics.base}/${encodeURIComponent(name)}`
        const auth = { authorization: `Bearer ${thumbd.apiKey}` }
        // Signed GET URLs: a fresh one per request for both servers (load/imgproxy-url.ts says why).
        const signed = { source, format, width, key, salt }
        const runs = {
          thumbdUrl: thumbdRoute === 'dialect'
            ? () => measure(thumbd.pid, thumbd.base, 'GET', {}, Buffer.alloc(0), { prefix: '/i', signed })
            : () => measure(thumbd.pid, `${thumbd.base}/api/thumbnail`, 'POST', { ...auth, 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ url: source, width, quality: 80, format }))),
          thumbdUpload: () => measure(thumbd.pid, `${thumbd.base}/api/thumbnail?width=${width}&quality=80&format=${format}`, 'POST', { ...auth, 'content-type': mime }, photo),
          imgproxy: () => measure(peer.pid, peer.base, 'GET', {}, Buffer.alloc(0), { prefix: '', signed })
        }
        const figures: Record<keyof typeof runs, PeerFigures[]> = { thumbdUrl: [], thumbdUpload: [], imgproxy: [] }
        // Alternating, so that a noisy minute on a shared machine hits every contender alike.
        for (let r = 0; r < repeats; r++) {
          for (const [which, go] of Object.entries(runs) as Array<[keyof typeof runs, () => Promise<PeerFigures>]>) {
            say(`${name} (${input}) ${format}: ${which}, repeat ${r + 1}/${repeats}`)
            figures[which].push(await go())
            peer.checkAlive()
          }
        }
        const [thumbdUrl, thumbdUpload, peerFigures] = [medians(figures.thumbdUrl), medians(figures.thumbdUpload), medians(figures.imgproxy)]
        rows.push({
          photo: name,
          input,
          megapixels: photoWidth * photoHeight / 1e6,
          format,
          thumbdUrl,
          thumbdUpload,
          imgproxy: peerFigures,
          ratio: thumbdUrl.okPerSecond / peerFigures.okPerSecond,
          cpuRatio: thumbdUrl.cpuMsPerOk / peerFigures.cpuMsPerOk
        })
      }
    }
  } finally {
    await peer.stop()
    await thumbd.stop()
    await statics.close()
  }
  return rows
}

function countBy (keys: string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1)
  return counts
}

/** Median of each figure apart, over the alternating runs. */
function medians (runs: PeerFigures[]): PeerFigures {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  return { okPerSecond: median(runs.map(r => r.okPerSecond)), cpuMsPerOk: median(runs.map(r => r.cpuMsPerOk)) }
}

export function peerTable (rows: PeerRow[], thumbdRoute: ThumbdRoute = 'dialect'): string[] {
  const urlRun = thumbdRoute === 'dialect' ? 'thumbd GET /i' : 'thumbd POST /api'
  const f = (n: number, d = 1) => n.toFixed(d)
  const both = (x: PeerFigures) => `${f(x.okPerSecond)} / ${f(x.cpuMsPerOk, 0)}`
  const range = (xs: number[]) => xs.length === 1 ? f(xs[0]!, 2) : `${f(Math.min(...xs), 2)}-${f(Math.max(...xs), 2)}`
  // Per input and output format: how many photos, and the range of their ratios.
  const groups = new Map<string, PeerRow[]>()
  for (const r of rows) groups.set(`${r.input} → ${r.format}`, [...(groups.get(`${r.input} → ${r.format}`) ?? []), r])
  return [
    `| photo | in | MP | out | ${urlRun}: ok/s / CPU ms | thumbd upload: ok/s / CPU ms | imgproxy: ok/s / CPU ms | ${urlRun} / imgproxy, ok/s | ${urlRun} / imgproxy, CPU |`,
    '|---|---|---:|---|---:|---:|---:|---:|---:|',
    ...rows.map(r => `| ${r.photo} | ${r.input} | ${f(r.megapixels)} | ${r.format} | ${both(r.thumbdUrl)} | ${both(r.thumbdUpload)} | ${both(r.imgproxy)} | **${f(r.ratio, 2)}** | **${f(r.cpuRatio, 2)}** |`),
    '',
    `| format | photos | ${urlRun} / imgproxy, ok/s | ${urlRun} / imgproxy, CPU |`,
    '|---|---:|---:|---:|',
    ...[...groups].map(([key, group]) => `| ${key} | ${group.length} | ${range(group.map(r => r.ratio))} | ${range(group.map(r => r.cpuRatio))} |`)
  ]
}
