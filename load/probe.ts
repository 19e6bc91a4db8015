// A low-rate /health probe running beside the load: what a load balancer would see.
export function startHealthProbe (base: string, everyMs = 100) {
  const latencies: number[] = []
  const statuses = new Map<number, number>()
  const stopped = new AbortController()
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      const started = performance.now()
      try {
        const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(10_000) })
        await res.arrayBuffer()
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      } catch {
        statuses.set(0, (statuses.get(0) ?? 0) + 1)
      }
      latencies.push(performance.now() - started)
      await new Promise(resolve => setTimeout(resolve, everyMs))
    }
  })()
  return {
    async stop () {
      stopped.abort()
      await loop
      return { p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), maxMs: Math.max(...latencies), samples: latencies.length }
    }
  }
}

export function percentile (values: number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}
