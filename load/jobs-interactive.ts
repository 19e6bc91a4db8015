// npm run jobs-interactive -- [--jobs 100] [--duration 20] [--connections 4]: interactive photo thumbnails' latency
// on one replica, without and then with a batch of asynchronous jobs running (issue #47: p99 with the batch within
// 1.2 x p99 without, and no 503 caused by jobs). Embedded queue, loopback only; stops by itself.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon, { type Result } from 'autocannon'
import { startStaticServer } from './static-server.ts'
import { startServer } from './server-process.ts'

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '100' }, duration: { type: 'string', default: '20' }, connections: { type: 'string', default: '4' } } })
const work = mkdtempSync(join(tmpdir(), 'thumbd-jobs-interactive-'))
execFileSync('mkdir', ['-p', join(work, 'media'), join(work, 'out')])
execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25:duration=6', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', join(work, 'media', 'clip.mp4')])
execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=2048x1536', '-frames:v', '1', '-q:v', '3', join(work, 'photo.jpg')])
const photo = readFileSync(join(work, 'photo.jpg'))
const origin = await startStaticServer(join(work, 'media'))
const server = await startServer({
  JOBS_DATA_DIR: join(work, 'jobs-db'),
  JOBS_DESTINATION_ROOT: join(work, 'out'),
  JOB_CONCURRENCY: '1',
  ALLOW_PRIVATE_SOURCES: 'true',
  ALLOWED_SOURCES: `${origin.base}/`
})
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

await interactive() // warm-up: threads started, estimates learned
const without = await interactive()
for (let i = 0; i < Number(values.jobs); i++) {
  const res = await fetch(`${server.base}/api/jobs`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ source: { url: `${origin.base}/clip.mp4` }, destination: `file://${join(work, 'out', `j${i}`)}`, outputs: [{ kind: 'still', name: 'poster' }, { kind: 'storyboard', count: 6 }, { kind: 'preview', frames: 8 }, { kind: 'hashes' }] })
  })
  if (res.status !== 202) throw new Error(`job ${i}: ${res.status}`)
}
// The queue opens on the first job: wait until one runs.
const until = Date.now() + 60_000
while (Date.now() < until && !/thumbd_async_jobs\{state="running"\} [1-9]/.test(await (await fetch(`${server.base}/metrics`)).text())) await new Promise(resolve => setTimeout(resolve, 1000))
const withJobs = await interactive()
const metrics = await (await fetch(`${server.base}/metrics`)).text()
console.log(JSON.stringify({
  without: summary(without),
  withJobs: summary(withJobs),
  p99Ratio: +(withJobs.latency.p99 / without.latency.p99).toFixed(2),
  jobsEnded: metrics.match(/thumbd_async_jobs_ended_total\{state="done"\} (\d+)/)?.[1] ?? '0'
}, null, 2))
await server.stop()
await origin.close()
rmSync(work, { recursive: true, force: true })
