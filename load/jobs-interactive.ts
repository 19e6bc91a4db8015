// npm run jobs-interactive -- [--jobs 100] [--duration 20] [--connections 4] [--rounds 3]: interactive photo
// thumbnails' latency on one replica, without and with a batch of asynchronous jobs running (issue #47: p99 with the
// batch within 1.2 x p99 without, and no 503 caused by jobs). The two alternate within one run, a pair a round (a
// busy host's noise then lands on both sides): each round measures with the queue empty and the server idle, submits
// the batch, measures while its jobs run, then cancels what is left and waits for the server to go idle again.
// Embedded queue, loopback only; stops by itself.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon, { type Result } from 'autocannon'
import { startStaticServer } from './static-server.ts'
import { treeCpuSeconds } from './sampler.ts'
import { startJobsServer } from './jobs-server.ts'

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '100' }, duration: { type: 'string', default: '20' }, connections: { type: 'string', default: '4' }, rounds: { type: 'string', default: '3' } } })
const work = mkdtempSync(join(tmpdir(), 'thumbd-jobs-interactive-'))
execFileSync('mkdir', ['-p', join(work, 'media'), join(work, 'out')])
execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25:duration=6', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', join(work, 'media', 'clip.mp4')])
execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=2048x1536', '-frames:v', '1', '-q:v', '3', join(work, 'photo.jpg')])
const photo = readFileSync(join(work, 'photo.jpg'))
const origin = await startStaticServer(join(work, 'media'))
const server = await startJobsServer(work, origin.base)
const headers = { authorization: `Bearer ${server.apiKey}` }

const interactive = () => new Promise<Result>((resolve, reject) => {
  autocannon({
    url: `${server.base}/api/thumbnail?width=320`,
    method: 'POST',
    headers: { ...headers, 'content-type': 'image/jpeg' },
    body: photo,
    connections: Number(values.connections),
    duration: Number(values.duration)
  }).then(resolve, reject)
})
const summary = (r: Result) => ({ requests: r.requests.total, p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max, statuses: Object.fromEntries(Object.entries(r.statusCodeStats).map(([s, { count }]) => [s, count])) })

/** Until the server's tree uses under 5 % of a core over 2 s: a cancelled job's step may still be finishing. */
async function idle () {
  for (let until = Date.now() + 120_000; Date.now() < until;) {
    const before = treeCpuSeconds(server.pid)
    await new Promise(resolve => setTimeout(resolve, 2000))
    if (treeCpuSeconds(server.pid) - before < 0.1) return
  }
  throw new Error('the server did not go idle within 2 minutes of the cancel')
}
const job = (i: number) => JSON.stringify({ source: { url: `${origin.base}/clip.mp4` }, destination: `file://${join(work, 'out', `j${i}`)}`, outputs: [{ kind: 'still', name: 'poster' }, { kind: 'storyboard', count: 6 }, { kind: 'preview', frames: 8 }, { kind: 'hashes' }] })
async function submitBatch (round: number): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < Number(values.jobs); i++) {
    const res = await fetch(`${server.base}/api/jobs`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: job(round * 100_000 + i) })
    if (res.status !== 202) throw new Error(`job ${i}: ${res.status}`)
    ids.push(((await res.json()) as { id: string }).id)
  }
  // The queue opens on the first job: wait until one runs.
  for (let until = Date.now() + 60_000; Date.now() < until;) {
    const states = await Promise.all(ids.slice(0, 3).map(async id => ((await (await fetch(`${server.base}/api/jobs/${id}`, { headers })).json()) as { state: string }).state))
    if (states.some(state => state !== 'queued')) break
    await new Promise(resolve => setTimeout(resolve, 500))
  }
  return ids
}
async function cancelBatch (ids: string[]) {
  for (const id of ids) await fetch(`${server.base}/api/jobs/${id}`, { method: 'DELETE', headers })
}

await interactive() // warm-up: threads started, estimates learned
const rounds = []
for (let round = 0; round < Number(values.rounds); round++) {
  await idle()
  const without = await interactive()
  const ids = await submitBatch(round)
  const withJobs = await interactive()
  await cancelBatch(ids)
  const pair = { without: summary(without), withJobs: summary(withJobs), p99Ratio: +(withJobs.latency.p99 / without.latency.p99).toFixed(2) }
  console.error(`round ${round + 1}: p99 ${pair.without.p99} ms without, ${pair.withJobs.p99} ms with jobs (x${pair.p99Ratio}); statuses ${JSON.stringify(pair.without.statuses)} / ${JSON.stringify(pair.withJobs.statuses)}`)
  rounds.push(pair)
}
const ratios = rounds.map(r => r.p99Ratio).sort((a, b) => a - b)
const metrics = await (await fetch(`${server.base}/metrics`)).text()
console.log(JSON.stringify({
  rounds,
  medianP99Ratio: ratios[Math.floor(ratios.length / 2)],
  jobsEnded: metrics.match(/thumbd_async_jobs_ended_total\{state="done"\} (\d+)/)?.[1] ?? '0'
}, null, 2))
await server.stop()
await origin.close()
rmSync(work, { recursive: true, force: true })
