// A low-rate /health probe running beside the load: what a load balancer would see. It runs in a process of
// its own, at normal priority: in the process that drives the load it would wait behind that process's own
// work (reading /proc, holding and copying request bodies), and report that delay as the server's.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const CHILD = fileURLToPath(new URL('probe-child.ts', import.meta.url))

export interface ProbeResult { p50Ms: number, p95Ms: number, p99Ms: number, maxMs: number, samples: number, statuses: Record<string, number> }

export function startHealthProbe (base: string, everyMs = 100) {
  const child = spawn(process.execPath, [CHILD, base, String(everyMs)], { stdio: ['pipe', 'pipe', 'inherit'] })
  let stdout = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  const exited = new Promise<number | null>(resolve => child.on('close', resolve))
  return {
    async stop (): Promise<ProbeResult> {
      child.stdin.end()
      const code = await exited
      let parsed: { latencies: number[], statuses: number[] }
      try {
        parsed = JSON.parse(stdout)
      } catch {
        throw new Error(`the /health probe failed (exit ${code})`)
      }
      const { latencies, statuses } = parsed
      const counts: Record<string, number> = {}
      for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1
      return { p50Ms: percentile(latencies, 50), p95Ms: percentile(latencies, 95), p99Ms: percentile(latencies, 99), maxMs: Math.max(...latencies), samples: latencies.length, statuses: counts }
    }
  }
}

export function percentile (values: number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}
