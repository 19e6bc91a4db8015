// /health under a flood of large uploads from clients that write before they read (issue 35, 4): starts
// thumbd as `npm start` would, runs 200 Python http.client clients (load/health-flood-clients.py) at nice 10
// in a process of their own, as the bench's loader, POSTing the 12 MB clip in a loop, and probes /health
// from 2 s in, every 15 ms, on its own kept-alive connection. Loopback only, bounded in time.
// Usage: node load/health-flood.ts [--seconds 15] [--clients 200] [--every 15] [--loader-nice 10]
//   [--env NAME=VALUE ...] [--why FILE]
// --env sets a variable of thumbd's (e.g. WORKER_NICENESS=19). --why says why the slow probes were slow: the
// probe reads the scheduler's account of thumbd's main thread and of itself around each probe
// (health-flood-probe.ts), thumbd records its garbage collections (health-flood-trace.ts); each slow probe
// (over 10 ms) is put down to what took most of its time, and the rows go to FILE.
import { spawn } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { sampleMedia } from './media.ts'
import { percentile, startHealthProbe } from './probe.ts'
import { envFlags, startServer } from './server-process.ts'

const CLIENTS = fileURLToPath(new URL('health-flood-clients.py', import.meta.url))
const WHY_PROBE = fileURLToPath(new URL('health-flood-probe.ts', import.meta.url))
const WHY_TRACE = fileURLToPath(new URL('health-flood-trace.ts', import.meta.url))
const SLOW_MS = 10
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    clients: { type: 'string', default: '200' },
    every: { type: 'string', default: '15' },
    'loader-nice': { type: 'string', default: '10' },
    env: { type: 'string', multiple: true, default: [] },
    why: { type: 'string' }
  }
})
const seconds = Math.min(60, Number(values.seconds))
const clients = Math.min(400, Number(values.clients))
const env = envFlags(values.env)
const traceFile = join(tmpdir(), `health-flood-trace-${process.pid}.json`)
if (values.why !== undefined) Object.assign(env, { NODE_OPTIONS: `--import=${WHY_TRACE}`, HEALTH_FLOOD_TRACE: traceFile })
const media = await sampleMedia(false)
const server = await startServer(env)
let why: Promise<number[][]> | undefined
try {
  const loader = spawn('nice', ['-n', values['loader-nice'], 'python3', CLIENTS, server.base, server.apiKey, media.video, String(clients), String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  loader.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const done = new Promise(resolve => loader.on('close', resolve))
  await new Promise(resolve => setTimeout(resolve, 2000))
  let stopProbe: () => Promise<{ p50Ms: number, p95Ms: number, p99Ms: number, maxMs: number, samples: number, statuses: Record<string, number> }>
  if (values.why === undefined) {
    stopProbe = startHealthProbe(server.base, Number(values.every)).stop
  } else {
    const child = spawn(process.execPath, [WHY_PROBE, server.base, values.every, String(server.pid)], { stdio: ['pipe', 'pipe', 'inherit'] })
    let rows = ''
    child.stdout.on('data', (chunk: Buffer) => { rows += chunk.toString() })
    why = new Promise(resolve => child.on('close', () => resolve(JSON.parse(rows) as number[][])))
    stopProbe = async () => {
      child.stdin.end()
      const latencies = (await why!).map(row => row[1]!)
      return { p50Ms: percentile(latencies, 50), p95Ms: percentile(latencies, 95), p99Ms: percentile(latencies, 99), maxMs: Math.max(...latencies), samples: latencies.length, statuses: {} }
    }
  }
  await new Promise(resolve => setTimeout(resolve, (seconds - 2) * 1000))
  const health = await stopProbe()
  await done
  const replies = JSON.parse(out || '{}') as Record<string, number>
  console.log(JSON.stringify({ p50Ms: +health.p50Ms.toFixed(1), p95Ms: +health.p95Ms.toFixed(1), p99Ms: +health.p99Ms.toFixed(1), maxMs: +health.maxMs.toFixed(1), probes: health.samples, probeStatuses: health.statuses, replies }))
} finally {
  await server.stop()
}
if (why !== undefined && values.why !== undefined) {
  const rows = await why
  const gcs = JSON.parse(readFileSync(traceFile, 'utf8')) as Array<[number, number, string]>
  rmSync(traceFile, { force: true })
  // A slow probe's time: thumbd's main thread on a CPU, waiting on a run queue, in GC (part of on-CPU), the
  // probe's own wait; the verdict is the largest of busy / not scheduled / probe starved.
  const verdicts: Record<string, number> = {}
  const detail = rows.filter(row => row[1]! > SLOW_MS).map(([at, ms, status, onCpu, queued, preempted, selfCpu, selfQueued, runnable]) => {
    const gcMs = gcs.filter(([start, gcMsEach]) => start < at! + ms! && start + gcMsEach > at!).reduce((sum, [, gcMsEach]) => sum + gcMsEach, 0)
    const shares = { busy: onCpu!, 'not scheduled': queued!, 'probe starved': selfQueued! }
    const verdict = Object.entries(shares).sort((a, b) => b[1] - a[1])[0]![0]
    verdicts[verdict] = (verdicts[verdict] ?? 0) + 1
    return { at, ms, status, mainOnCpuMs: onCpu, mainQueuedMs: queued, mainPreempted: preempted, gcMs: +gcMs.toFixed(2), probeOnCpuMs: selfCpu, probeQueuedMs: selfQueued, runnable, verdict }
  })
  const sum = (key: 'ms' | 'mainOnCpuMs' | 'mainQueuedMs' | 'gcMs' | 'probeQueuedMs') => +detail.reduce((total, row) => total + row[key]!, 0).toFixed(1)
  console.log(JSON.stringify({ slowProbes: detail.length, verdicts, slowMs: sum('ms'), mainOnCpuMs: sum('mainOnCpuMs'), mainQueuedMs: sum('mainQueuedMs'), gcMs: sum('gcMs'), probeQueuedMs: sum('probeQueuedMs'), gcs: gcs.length, gcTotalMs: +gcs.reduce((total, [, ms]) => total + ms, 0).toFixed(1) }))
  await writeFile(values.why, JSON.stringify({ rows, gcs, slow: detail }) + '\n')
}
