// /health under a flood of large uploads from clients that write before they read (issue 35, 4): starts
// thumbd as `npm start` would, runs 200 Python http.client clients (load/health-flood-clients.py) at nice 10
// in a process of their own, as the bench's loader, POSTing the 12 MB clip in a loop, and probes /health
// from 2 s in, every 15 ms, on its own kept-alive connection. Loopback only, bounded in time.
// Usage: node load/health-flood.ts [--seconds 15] [--clients 200] [--every 15]
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { sampleMedia } from './media.ts'
import { startHealthProbe } from './probe.ts'
import { startServer } from './server-process.ts'

const CLIENTS = fileURLToPath(new URL('health-flood-clients.py', import.meta.url))
const { values } = parseArgs({ options: { seconds: { type: 'string', default: '15' }, clients: { type: 'string', default: '200' }, every: { type: 'string', default: '15' } } })
const seconds = Math.min(60, Number(values.seconds))
const clients = Math.min(400, Number(values.clients))
const media = await sampleMedia(false)
const server = await startServer({})
try {
  const loader = spawn('nice', ['-n', '10', 'python3', CLIENTS, server.base, server.apiKey, media.video, String(clients), String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  loader.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const done = new Promise(resolve => loader.on('close', resolve))
  await new Promise(resolve => setTimeout(resolve, 2000))
  const probe = startHealthProbe(server.base, Number(values.every))
  await new Promise(resolve => setTimeout(resolve, (seconds - 2) * 1000))
  const health = await probe.stop()
  await done
  const replies = JSON.parse(out || '{}') as Record<string, number>
  console.log(JSON.stringify({ p50Ms: +health.p50Ms.toFixed(1), p95Ms: +health.p95Ms.toFixed(1), p99Ms: +health.p99Ms.toFixed(1), maxMs: +health.maxMs.toFixed(1), probes: health.samples, probeStatuses: health.statuses, replies }))
} finally {
  await server.stop()
}
