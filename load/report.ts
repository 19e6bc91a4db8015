// The table printed at the end, the JSON written under load/results/, and the SVG chart of --compare.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ShapeResult } from './run.ts'

export interface Report {
  date: string
  machine: { cores: number, cpu: string, memoryGB: number, node: string }
  scenario: { name: string, describe: string }
  settings: { connections: number, durationSeconds: number, target?: string }
  results: ShapeResult[]
}

const f = (n: number | null, digits = 0) => n === null || !Number.isFinite(n) ? '-' : n.toFixed(digits)

export function table (report: Report): string {
  const head = ['shape', 'ok/s', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', '503 %', 'health p99 ms', 'peak RSS MB', 'cores used', 'replies']
  const rows = report.results.map(r => [
    r.shape, f(r.okPerSecond, 1), f(r.requestsPerSecond, 1), f(r.latencyMs.p50), f(r.latencyMs.p90), f(r.latencyMs.p99),
    f(r.rate503 * 100, 1), f(r.health.p99Ms, 1), f(r.peakRssMB), f(r.coresUsed, 2),
    Object.entries(r.replies).map(([code, n]) => `${code}:${n}`).join(' ') + (r.errors > 0 ? ` errors:${r.errors}` : '')
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map(row => row[i]!.length)))
  const line = (cells: string[]) => '| ' + cells.map((c, i) => i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)).join(' | ') + ' |'
  const { machine, scenario, settings } = report
  return [
    `scenario ${scenario.name}: ${scenario.describe}`,
    `${settings.connections} connections, ${settings.durationSeconds} s per shape, ${machine.cores} cores (${machine.cpu}), ${machine.memoryGB} GB, Node ${machine.node}`,
    '',
    line(head),
    '|' + widths.map((w, i) => i === 0 || i === widths.length - 1 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':').join('|') + '|',
    ...rows.map(line)
  ].join('\n')
}

/** Two bar charts side by side: successful throughput and p99 latency per shape. */
export function chart (report: Report): string {
  const rows = report.results
  const barArea = 260
  const rowHeight = 28
  const height = 60 + rows.length * rowHeight
  const panel = (x: number, title: string, values: number[], unit: string, colour: string) => {
    const max = Math.max(...values, 1e-9)
    return `<text x="${x}" y="30" font-weight="bold">${title}</text>` + values.map((v, i) => {
      const y = 45 + i * rowHeight
      const w = Math.max(1, (v / max) * barArea)
      return `<rect x="${x}" y="${y}" width="${w.toFixed(1)}" height="18" fill="${colour}"/><text x="${x + w + 6}" y="${y + 14}">${v.toFixed(unit === 'ms' ? 0 : 1)} ${unit}</text>`
    }).join('')
  }
  const labels = rows.map((r, i) => `<text x="10" y="${59 + i * rowHeight}">${r.shape}</text>`).join('')
  return `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="${height}" font-family="sans-serif" font-size="13">` +
    `<rect width="100%" height="100%" fill="white"/>${labels}` +
    panel(140, `ok/s (${report.scenario.name}, ${report.settings.connections} conn)`, rows.map(r => r.okPerSecond), '/s', '#3b82f6') +
    panel(520, 'p99 latency', rows.map(r => r.latencyMs.p99), 'ms', '#f97316') +
    '</svg>\n'
}

export async function save (report: Report, outDir: string, withChart: boolean): Promise<string[]> {
  await mkdir(outDir, { recursive: true })
  const stem = join(outDir, `${report.date.replace(/[:.]/g, '-')}-${report.scenario.name}`)
  await writeFile(`${stem}.json`, JSON.stringify(report, null, 2) + '\n')
  if (!withChart) return [`${stem}.json`]
  await writeFile(`${stem}.svg`, chart(report))
  return [`${stem}.json`, `${stem}.svg`]
}
