// A seconds-long smoke of `npm run load`: tiny media, one shape, real server, real autocannon.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'

const run = promisify(execFile)
const LOAD = fileURLToPath(new URL('../../load/index.ts', import.meta.url))

const finite = (value: unknown, what: string) => assert.ok(typeof value === 'number' && Number.isFinite(value), `${what} is a number (${value})`)

for (const scenario of ['video', 'video-url']) {
  test(`npm run load --scenario ${scenario}: the table's figures are real numbers taken from the run`, async () => {
    const out = mkdtempSync(join(tmpdir(), 'thumbd-load-'))
    const { stdout } = await run(process.execPath, [LOAD, '--tiny', '--scenario', scenario, '--duration', '2', '--connections', '2', '--json', '--out', out], { timeout: 120_000 })
    const report = JSON.parse(stdout)
    assert.equal(report.scenario.name, scenario)
    assert.equal(report.results.length, 1)
    const [r] = report.results
    assert.equal(r.shape, 'pool')
    assert.ok(r.replies['200'] > 0, `some 200 replies: ${JSON.stringify(r.replies)}`)
    for (const [what, value] of Object.entries({ okPerSecond: r.okPerSecond, p50: r.latencyMs.p50, p99: r.latencyMs.p99, healthP99: r.health.p99Ms, rss: r.peakRssMB, cores: r.coresUsed, rate503: r.rate503 })) finite(value, what)
    assert.ok(r.okPerSecond > 0 && r.latencyMs.p99 >= r.latencyMs.p50 && r.latencyMs.p50 > 0)
    assert.ok(r.health.samples >= 5, 'the health probe ran beside the load')
    assert.ok(r.peakRssMB > 50 && r.peakRssMB < 4096, `RSS of a real server (${r.peakRssMB} MB)`)
    assert.ok(r.coresUsed > 0.05 && r.coresUsed <= report.machine.cores + 0.5, `cores used (${r.coresUsed})`)
    const written = readdirSync(out).filter(f => f.endsWith('.json'))
    assert.equal(written.length, 1)
    assert.deepEqual(JSON.parse(readFileSync(join(out, written[0]!), 'utf8')).results, report.results)
  })
}

test('bad flags, scenarios and targets: one line, non-zero exit, no load sent', async () => {
  for (const args of [['--bogus'], ['--scenario', 'nope'], ['--duration', 'x'], ['--target', 'http://127.0.0.1:9', '--api-key', 'k'], ['--target', 'http://127.0.0.1:9']]) {
    await assert.rejects(run(process.execPath, [LOAD, ...args], { timeout: 20_000 }), (err: { code: number, stderr: string }) => {
      assert.equal(err.code, 2, args.join(' '))
      assert.match(err.stderr, /thumbd load: /)
      return true
    })
  }
})
