// Redraws the SVG chart of a saved --compare report (its JSON), next to it or where --out says:
// node load/chart.ts docs/benchmarks/compare-video.json
import { readFile, writeFile } from 'node:fs/promises'
import { chart, type Report } from './report.ts'

const [json, flag, out] = process.argv.slice(2)
if (json === undefined || (flag !== undefined && (flag !== '--out' || out === undefined))) {
  process.stderr.write('usage: node load/chart.ts REPORT.json [--out CHART.svg]\n')
  process.exit(2)
}
const target = out ?? json.replace(/\.json$/, '.svg')
await writeFile(target, chart(JSON.parse(await readFile(json, 'utf8')) as Report))
process.stdout.write(`${target}\n`)
