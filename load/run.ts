// One measured run: optional warm-up, autocannon at the given connections for the given time, a /health
// probe beside it, and the server's process tree sampled for RSS and CPU.
import { fire, type Cannon } from './cannon.ts'
import { startHealthProbe, type ProbeResult } from './probe.ts'
import { startSampler } from './sampler.ts'
import type { Request } from './scenarios.ts'

export interface ShapeResult {
  shape: string
  scenario: string
  connections: number
  durationSeconds: number
  /** 200 replies per second: the work actually done. */
  okPerSecond: number
  /** All replies per second, 503s included. */
  requestsPerSecond: number
  latencyMs: { p50: number, p90: number, p99: number }
  replies: Record<string, number>
  rate503: number
  errors: number
  timeouts: number
  health: ProbeResult
  /** Summed over the server's process tree; null against --target. */
  peakRssMB: number | null
  coresUsed: number | null
}

export interface RunSettings {
  shape: string
  scenario: string
  base: string
  apiKey: string
  /** Server pid to sample; undefined against --target. */
  pid?: number
  request: Request
  connections: number
  durationSeconds: number
  warmupRequests: number
  onProgress: (line: string) => void
  /** Lets Ctrl-C stop the run in progress. */
  track: (cannon: Cannon | undefined) => void
}

export async function runShape (s: RunSettings): Promise<ShapeResult> {
  const headers = { authorization: `Bearer ${s.apiKey}`, 'content-type': s.request.contentType }
  const send = () => fetch(`${s.base}${s.request.path}`, { method: 'POST', headers, body: new Uint8Array(s.request.body) }).then(r => r.arrayBuffer())
  // Warm-up: route compilation, and sharp/libvips loading in every worker.
  await Promise.all(Array.from({ length: s.warmupRequests }, send))

  const sampler = s.pid === undefined ? undefined : startSampler(s.pid)
  const probe = startHealthProbe(s.base)
  const cannon = fire({ url: `${s.base}${s.request.path}`, headers, body: s.request.body, connections: s.connections, durationSeconds: s.durationSeconds })
  s.track(cannon)
  let seconds = 0
  const ticker = setInterval(() => s.onProgress(`${s.shape}: ${Math.min(++seconds, s.durationSeconds)}/${s.durationSeconds} s`), 1000)
  const result = await cannon.result.finally(() => clearInterval(ticker))
  s.track(undefined)
  const health = await probe.stop()
  const usage = sampler?.stop()

  const replies = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]))
  const total = Object.values(replies).reduce((a, b) => a + b, 0)
  return {
    shape: s.shape,
    scenario: s.scenario,
    connections: s.connections,
    durationSeconds: result.duration,
    okPerSecond: (replies['200'] ?? 0) / result.duration,
    requestsPerSecond: total / result.duration,
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99 },
    replies,
    rate503: total === 0 ? 0 : (replies['503'] ?? 0) / total,
    errors: result.errors,
    timeouts: result.timeouts,
    health,
    peakRssMB: usage === undefined ? null : usage.peakRssBytes / 2 ** 20,
    coresUsed: usage === undefined ? null : usage.coresUsed
  }
}
