// npm run bench:jobs-cpu -- [--videos 4] [--rounds 3] [--seconds 10] [--gop N]: a job's CPU against the CPU of the same
// outputs made by separate synchronous calls (issue #47: a job's ≤ the calls'). One server, started here, with the
// embedded queue; N short 720p H.264 videos made by ffmpeg (x264's own GOP unless --gop), served from loopback.
// For each video, alternating: (a) one job with a poster, a 6-tile storyboard, an 8-frame preview and the hashes;
// (b) the same four outputs as POST /api/thumbnail, /api/storyboard, /api/preview, /api/hash by URL. CPU is the
// server's process tree (/proc utime+stime, with cutime+cstime of the reaped ffmpeg children), read around each.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { treeCpuSeconds } from './sampler.ts'
import { startStaticServer } from './static-server.ts'
import { startJobsServer } from './jobs-server.ts'

const { values } = parseArgs({ options: { videos: { type: 'string', default: '4' }, rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '10' }, gop: { type: 'string' } } })
const work = mkdtempSync(join(tmpdir(), 'thumbd-jobs-cpu-'))
execFileSync('mkdir', ['-p', join(work, 'media'), join(work, 'out')])
const videos = Array.from({ length: Number(values.videos) }, (_, i) => {
  const name = `clip${i}.mp4`
  execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', `testsrc2=size=1280x720:rate=25:duration=${values.seconds},hue=h=${i * 37}`, '-c:v', 'libx264', '-preset', 'veryfast', ...(values.gop === undefined ? [] : ['-g', values.gop]), '-pix_fmt', 'yuv420p', join(work, 'media', name)])
  return name
})

const origin = await startStaticServer(join(work, 'media'))
const server = await startJobsServer(work, origin.base)
const auth = { authorization: `Bearer ${server.apiKey}` }
const json = { ...auth, 'content-type': 'application/json' }
let jobs = 0

async function asJob (video: string) {
  const res = await fetch(`${server.base}/api/jobs`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ source: { url: `${origin.base}/${video}` }, destination: `file://${join(work, 'out', `j${jobs++}`)}`, outputs: [{ kind: 'still', name: 'poster' }, { kind: 'storyboard', count: 6 }, { kind: 'preview', frames: 8 }, { kind: 'hashes' }] })
  })
  if (res.status !== 202) throw new Error(`job: ${res.status} ${await res.text()}`)
  const { status } = await res.json() as { status: string }
  for (;;) {
    const state = await (await fetch(`${server.base}${status}`, { headers: auth })).json() as { state: string, outputs: Array<{ error?: unknown }> }
    if (state.state === 'done' && state.outputs.every(o => o.error === undefined)) return
    if (state.state !== 'queued' && state.state !== 'running') throw new Error(`job ended ${JSON.stringify(state)}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

async function asCalls (video: string) {
  for (const path of ['thumbnail', 'storyboard?count=6', 'preview?frames=8', 'hash']) {
    const res = await fetch(`${server.base}/api/${path}`, { method: 'POST', headers: json, body: JSON.stringify({ url: `${origin.base}/${video}` }) })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`)
  }
}

const cpuOf = async (work: () => Promise<void>) => {
  const start = treeCpuSeconds(server.pid) * 1000
  const began = performance.now()
  await work()
  return { cpu: treeCpuSeconds(server.pid) * 1000 - start, wall: performance.now() - began }
}
const figures = { job: [] as number[], calls: [] as number[], idle: [] as number[] }
try {
  // Warm-up: the queue opened, the pool's threads started, the origin's cache filled.
  for (const video of videos) { await asJob(video); await asCalls(video) }
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const video of videos) {
      // Alternating, and which goes first alternating too.
      const order = (round + videos.indexOf(video)) % 2 === 0 ? ['job', 'calls'] as const : ['calls', 'job'] as const
      for (const kind of order) figures[kind].push((await cpuOf(() => kind === 'job' ? asJob(video) : asCalls(video))).cpu)
    }
    // What the server spends doing nothing (the queue's polling) in a second: part of both figures.
    figures.idle.push((await cpuOf(() => new Promise(resolve => setTimeout(resolve, 1000)))).cpu)
  }
} finally {
  await server.stop()
  await origin.close()
  rmSync(work, { recursive: true, force: true })
}
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!
console.log(JSON.stringify({
  videos: `${values.videos} x ${values.seconds} s 1280x720 H.264, GOP ${values.gop ?? 'x264 default (250)'}`,
  rounds: Number(values.rounds),
  jobCpuMs: { median: median(figures.job), all: figures.job },
  callsCpuMs: { median: median(figures.calls), all: figures.calls },
  idleCpuMsPerSecond: median(figures.idle),
  ratio: +(median(figures.job) / median(figures.calls)).toFixed(2),
  pairRatios: figures.job.map((j, i) => +(j / figures.calls[i]!).toFixed(2))
}, null, 2))
