// The --compare picture draws what the comparison shows (issue 48): besides ok/s and p99, the refused share,
// /health's p99 and peak memory, for every shape; the checked-in picture is the one its JSON draws; and in a
// real browser every label is inside the picture and no two overlap.
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chart, type Report } from '../../load/report.ts'
import { openPage } from '../docs/chromium-session.ts'
import { tempFolder } from '../temp-folder.ts'

const JSON_FILE = fileURLToPath(new URL('../../docs/benchmarks/compare-video.json', import.meta.url))
const SVG_FILE = fileURLToPath(new URL('../../docs/benchmarks/compare-video.svg', import.meta.url))
const report = JSON.parse(readFileSync(JSON_FILE, 'utf8')) as Report

test('the comparison picture shows every shape\'s ok/s, p99, refused share, /health p99 and peak memory', () => {
  const svg = chart(report)
  const texts = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map(m => m[1]!)
  for (const title of ['ok/s', 'p99 latency', 'refused (503 %)', '/health p99', 'peak memory (RSS)']) assert.ok(texts.includes(title), title)
  for (const r of report.results) {
    const figures = [`${r.okPerSecond.toFixed(1)} /s`, `${r.latencyMs.p99.toFixed(0)} ms`, `${(r.rate503 * 100).toFixed(1)} %`, `${r.health.p99Ms.toFixed(1)} ms`, `${r.peakRssMB!.toFixed(0)} MB`]
    for (const figure of figures) assert.ok(texts.some(text => text.startsWith(figure)), `${r.shape}: ${figure}`)
  }
  assert.equal(readFileSync(SVG_FILE, 'utf8'), svg, 'docs/benchmarks/compare-video.svg is redrawn from its JSON: node load/chart.ts docs/benchmarks/compare-video.json')
})

test('in headless Chromium every label of the picture is inside it, and none overlaps another', { timeout: 120_000 }, async (t) => {
  const dir = tempFolder('thumbd-chart-', t)
  writeFileSync(join(dir, 'chart.svg'), chart(report))
  const page = await openPage(`file://${join(dir, 'chart.svg')}`, { profile: join(dir, 'profile'), windowSize: '1400,900' })
  t.after(() => page.close())
  let boxes: Array<{ text: string, x: number, y: number, width: number, height: number }> = []
  for (let tries = 0; boxes.length === 0 && tries < 100; tries++) {
    boxes = (await page.evaluate('[...document.querySelectorAll(\'text\')].map(t => { const b = t.getBBox(); return { text: t.textContent, x: b.x, y: b.y, width: b.width, height: b.height } })') ?? []) as typeof boxes
    if (boxes.length === 0) await new Promise(resolve => setTimeout(resolve, 100))
  }
  const svg = await page.evaluate('(() => { const s = document.documentElement; return [s.width.baseVal.value, s.height.baseVal.value] })()') as [number, number]
  assert.ok(boxes.length > 30, `labels drawn: ${boxes.length}`)
  for (const b of boxes) {
    assert.ok(b.width > 0 && b.x >= 0 && b.y >= 0 && b.x + b.width <= svg[0] && b.y + b.height <= svg[1], `"${b.text}" inside the ${svg} picture: ${JSON.stringify(b)}`)
  }
  const overlap = (a: typeof boxes[0], b: typeof boxes[0]) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
  const overlapping = boxes.flatMap((a, i) => boxes.slice(i + 1).filter(b => overlap(a, b)).map(b => `"${a.text}" / "${b.text}"`))
  assert.deepEqual(overlapping, [], 'labels that overlap')
})
