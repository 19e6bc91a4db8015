// Preloaded into thumbd by `load/health-flood.ts --why` (NODE_OPTIONS=--import): the main thread's garbage
// collections (epoch ms at start, ms, V8's kind) written to HEALTH_FLOOD_TRACE as one JSON line at exit, to
// lay beside the slow probes.
import { writeFileSync } from 'node:fs'
import { PerformanceObserver, constants } from 'node:perf_hooks'

const kinds: Record<number, string> = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak' }
const gcs: Array<[number, number, string]> = []
new PerformanceObserver(list => {
  for (const entry of list.getEntries()) gcs.push([+(performance.timeOrigin + entry.startTime).toFixed(1), +entry.duration.toFixed(2), kinds[(entry as PerformanceEntry & { detail: { kind: number } }).detail.kind] ?? '?'])
}).observe({ entryTypes: ['gc'] })
process.on('exit', () => writeFileSync(process.env.HEALTH_FLOOD_TRACE!, JSON.stringify(gcs) + '\n'))
