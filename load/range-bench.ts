// npm run bench:ranges: remote videos read by range requests, the rows of docs/benchmarks.md's "Remote videos". A
// 1-hour 1080p H.264 video of about 2 GB (MP4, index at the end; and the same as Matroska, cues at the end) is
// made once by ffmpeg (one minute encoded, then copied end to end with -c copy) under load/.media/, served by a
// loopback origin that answers ranges and counts the bytes it sends (range-origin.ts), and asked of a thumbd
// started as `npm start` is: the poster frame at 50 % (exact and keyframe seeks), a 60-tile storyboard and an
// 8-frame 320 px WebP preview; then the same preview of a 30 s upload (the first half minute of that 1080p clip).
// Prints each case's median time, the bytes the origin sent, and the server's peak memory; then seek=keyframe
// against the exact frame on a long-GOP clip (10 s of 1080p, one keyframe, frame at 8 s), uploaded.
import { readFile, stat } from 'node:fs/promises'
import { availableParallelism, cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { halfMinuteClip, longGopClip, longVideos } from './range-media.ts'
import { startOrigin, type OriginFile } from './range-origin.ts'
import { startSampler } from './sampler.ts'
import { startServer, warmCompileCache } from './server-process.ts'

const { values: flags } = parseArgs({ options: { repeats: { type: 'string', default: '5' }, minutes: { type: 'string', default: '60' } } })
const repeats = Number(flags.repeats)
const minutes = Number(flags.minutes)
const say = (line: string) => process.stderr.write(`${line}\n`)

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`

const videos = await longVideos(minutes)
const files: Record<string, OriginFile> = {}
for (const [name, path] of Object.entries(videos)) files[name] = { path, size: (await stat(path)).size }
const origin = await startOrigin(files)
await warmCompileCache()
const server = await startServer({ ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: origin.url(''), JOB_TIMEOUT_MS: '60000' })

interface Case { name: string, route: string, file: string, body: Record<string, unknown> }
const CASES: Case[] = [
  { name: 'poster at 50 %, MP4 (index at the end)', route: 'thumbnail', file: 'mp4', body: { at: '50%' } },
  { name: 'poster at 50 %, Matroska (cues at the end)', route: 'thumbnail', file: 'mkv', body: { at: '50%' } },
  { name: 'poster at 50 %, MP4, seek=keyframe', route: 'thumbnail', file: 'mp4', body: { at: '50%', seek: 'keyframe' } },
  { name: 'poster at 50 %, Matroska, seek=keyframe', route: 'thumbnail', file: 'mkv', body: { at: '50%', seek: 'keyframe' } },
  { name: '60-tile storyboard, MP4', route: 'storyboard', file: 'mp4', body: { count: 60 } },
  { name: '8-frame 320 px WebP preview, MP4', route: 'preview', file: 'mp4', body: { frames: 8, width: 320 } }
]

const results = new Map<string, Array<{ ms: number, bytes: number, requests: number }>>()
try {
  // Alternating: one run of every case per round, so a noisy moment of the machine is shared by all.
  for (let round = 0; round < repeats; round++) {
    for (const c of CASES) {
      const [sentBefore, requestsBefore] = [origin.sent(), origin.ranges().length]
      const started = performance.now()
      const res = await fetch(`${server.base}/api/${c.route}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: origin.url(c.file), ...c.body })
      })
      await res.arrayBuffer()
      const ms = performance.now() - started
      if (res.status !== 200) throw new Error(`${c.name}: ${res.status}`)
      const list = results.get(c.name) ?? []
      list.push({ ms, bytes: origin.sent() - sentBefore, requests: origin.ranges().length - requestsBefore })
      results.set(c.name, list)
      say(`round ${round + 1}: ${c.name}: ${ms.toFixed(0)} ms`)
    }
  }
  // Peak memory of the server and its helpers over one more storyboard.
  const sampler = startSampler(server.pid, 50)
  await fetch(`${server.base}/api/storyboard`, { method: 'POST', headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: origin.url('mp4'), count: 60 }) }).then(r => r.arrayBuffer())
  const { peakRssBytes } = sampler.stop()

  const lines = [
    `range reads: ${availableParallelism()} cores (${cpus()[0]?.model.trim()}), median of ${repeats} alternating runs, loopback origin`,
    `files: MP4 ${mb(files.mp4 !== undefined && !Buffer.isBuffer(files.mp4) ? files.mp4.size : 0)}, Matroska ${mb(files.mkv !== undefined && !Buffer.isBuffer(files.mkv) ? files.mkv.size : 0)}, ${minutes} min of 1080p H.264`,
    '',
    '| case | time (median) | bytes sent by the origin (median) | of the file | requests |',
    '|---|---:|---:|---:|---:|'
  ]
  for (const c of CASES) {
    const list = results.get(c.name)!
    const size = (files[c.file] as { size: number }).size
    const bytes = median(list.map(r => r.bytes))
    lines.push(`| ${c.name} | ${(median(list.map(r => r.ms)) / 1000).toFixed(2)} s | ${mb(bytes)} | ${(100 * bytes / size).toFixed(2)} % | ${median(list.map(r => r.requests))} |`)
  }
  lines.push('', `peak RSS of the server and its helpers during a 60-tile storyboard: ${mb(peakRssBytes)}`)

  // seek=keyframe on a long GOP, uploaded: alternating, `repeats` pairs.
  const clip = await readFile(await longGopClip())
  const times: Record<string, number[]> = { exact: [], keyframe: [] }
  for (let round = 0; round < repeats; round++) {
    for (const seek of ['exact', 'keyframe']) {
      const started = performance.now()
      const res = await fetch(`${server.base}/api/thumbnail?at=8&seek=${seek}`, { method: 'POST', headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'video/mp4' }, body: clip })
      await res.arrayBuffer()
      if (res.status !== 200) throw new Error(`long GOP, ${seek}: ${res.status}`)
      times[seek]!.push(performance.now() - started)
    }
  }
  const [exact, keyframe] = [median(times.exact!), median(times.keyframe!)]
  lines.push(`long GOP (10 s of 1080p, one keyframe), frame at 8 s, uploaded: exact ${(exact / 1000).toFixed(2)} s, seek=keyframe ${(keyframe / 1000).toFixed(2)} s (${(exact / keyframe).toFixed(1)}x faster)`)

  // An 8-frame 320 px WebP preview of a 30 s upload (1080p, a keyframe every 2 s), from the request's first byte.
  const halfMinute = await readFile(await halfMinuteClip())
  const previews: number[] = []
  for (let round = 0; round < repeats; round++) {
    const started = performance.now()
    const res = await fetch(`${server.base}/api/preview?frames=8&width=320`, { method: 'POST', headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'video/mp4' }, body: halfMinute })
    const bytes = (await res.arrayBuffer()).byteLength
    if (res.status !== 200) throw new Error(`preview of an upload: ${res.status}`)
    previews.push(performance.now() - started)
    if (round === 0) lines.push(`8-frame 320 px WebP preview: ${(bytes / 1024).toFixed(0)} KiB`)
  }
  lines.push(`8-frame 320 px WebP preview of a 30 s 1080p upload (${mb(halfMinute.length)}): ${(median(previews) / 1000).toFixed(2)} s`)
  process.stdout.write(lines.join('\n') + '\n')
} finally {
  await server.stop()
  await origin.close()
}
