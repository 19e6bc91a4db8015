// A seconds-long smoke of `npm run bench`: tiny media, one repeat. It checks the figures are real, not how fast.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { tempFolder } from '../temp-folder.ts'

const run = promisify(execFile)
const BENCH = fileURLToPath(new URL('../../load/bench.ts', import.meta.url))

const positive = (value: unknown, what: string) => assert.ok(typeof value === 'number' && Number.isFinite(value) && value > 0, `${what} is a positive number (${value})`)

test('npm run bench --quick measures raw ceilings and thumbd in the same run', { timeout: 180_000 }, async (t) => {
  const out = tempFolder('thumbd-bench-', t)
  const { stdout } = await run(process.execPath, [BENCH, '--quick', '--duration', '1', '--json', '--out', out], { timeout: 170_000 })
  const report = JSON.parse(stdout)
  assert.deepEqual(report.throughput.map((r: { workload: string }) => r.workload.split(' ')[0]), ['video', 'image', 'image', 'hash'])
  for (const row of report.throughput) {
    positive(row.rawPerSecond.median, `${row.workload} raw`)
    positive(row.thumbdPerSecond.median, `${row.workload} thumbd`)
    positive(row.ratio.median, `${row.workload} ratio`)
  }
  positive(report.singleVideo.cliMs, 'single video CLI ms')
  positive(report.singleVideo.thumbdMs, 'single video thumbd ms')
  positive(report.idleRssMB, 'idle RSS')
  positive(report.peakRssUnderImageLoadMB, 'peak RSS')
  positive(report.healthUnder200Connections.p99Ms, '/health p99')
  assert.ok(report.healthUnder200Connections.samples >= 3)
})
