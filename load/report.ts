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

interface Panel {
  title: string
  /** Which way is better, said under the title: the shapes differ less in ok/s than in what they cost. */
  better: 'higher' | 'lower'
  value: (r: ShapeResult) => number | null
  text: (r: ShapeResult) => string
  colour: string
}

/**
 * What the comparison shows, one panel per column of the table that tells the shapes apart: ok/s and p99 (on
 * 2 cores every shape serves about as many), and what they cost for it: the share of requests refused, how
 * slow /health gets, the peak memory. Drawn from ok/s and p99 alone, the shapes looked alike.
 */
const PANELS: Panel[] = [
  { title: 'ok/s', better: 'higher', value: r => r.okPerSecond, text: r => `${f(r.okPerSecond, 1)} /s`, colour: '#3b82f6' },
  { title: 'p99 latency', better: 'lower', value: r => r.latencyMs.p99, text: r => `${f(r.latencyMs.p99)} ms`, colour: '#f97316' },
  {
    title: 'refused (503 %)',
    better: 'lower',
    value: r => r.rate503 * 100,
    // Requests cut without any reply (connection errors) are not in the 503 share: counted beside it.
    text: r => `${f(r.rate503 * 100, 1)} %${r.errors > 0 ? ` (+${r.errors} resets)` : ''}`,
    colour: '#dc2626'
  },
  { title: '/health p99', better: 'lower', value: r => r.health.p99Ms, text: r => `${f(r.health.p99Ms, 1)} ms`, colour: '#7c3aed' },
  { title: 'peak memory (RSS)', better: 'lower', value: r => r.peakRssMB, text: r => `${f(r.peakRssMB)} MB`, colour: '#059669' }
]

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** In the free slot after the panels: how to read them. */
function legend (x: number, y: number): string {
  return ['How to read it', 'bold: pool, the product (thumbd as it ships)', 'resets: requests cut without a reply', '(connection errors, beside the 503s)']
    .map((line, i) => `<text x="${x}" y="${y + 16 + i * 18}"${i === 0 ? ' font-weight="bold"' : ' fill="#333" font-size="12"'}>${line}</text>`).join('')
}

/** The bar charts of --compare, three panels a row, each shape a row of bars; the product (pool) in bold. */
export function chart (report: Report): string {
  const rows = report.results
  const columns = 3
  const labelWidth = 130
  const panelWidth = 330
  const barArea = 170
  const rowHeight = 24
  const panelHeight = 58 + rows.length * rowHeight
  const top = 46
  const width = labelWidth + columns * panelWidth
  const height = top + Math.ceil(PANELS.length / columns) * panelHeight
  const panel = (p: Panel, index: number) => {
    const x = labelWidth + (index % columns) * panelWidth
    const y0 = top + Math.floor(index / columns) * panelHeight
    const values = rows.map(r => p.value(r) ?? 0)
    const max = Math.max(...values, 1e-9)
    const bars = rows.map((r, i) => {
      const y = y0 + 40 + i * rowHeight
      const w = Math.max(1, (values[i]! / max) * barArea)
      const weight = r.shape === 'pool' ? ' font-weight="bold"' : ''
      return `<rect x="${x}" y="${y}" width="${w.toFixed(1)}" height="16" fill="${p.colour}" fill-opacity="${r.shape === 'pool' ? 1 : 0.55}"/>` +
        `<text x="${(x + w + 5).toFixed(1)}" y="${y + 13}"${weight}>${escape(p.text(r))}</text>`
    }).join('')
    const labels = rows.map((r, i) => `<text x="${x - 8}" y="${y0 + 53 + i * rowHeight}" text-anchor="end"${r.shape === 'pool' ? ' font-weight="bold"' : ''}>${escape(r.shape)}</text>`).join('')
    return `<text x="${x}" y="${y0 + 16}" font-weight="bold">${escape(p.title)}</text>` +
      `<text x="${x}" y="${y0 + 31}" fill="#555" font-size="11">${p.better} is better</text>` +
      (index % columns === 0 ? labels : '') + bars
  }
  const { scenario, settings, machine } = report
  const title = `${scenario.name}: ${scenario.describe}; ${settings.connections} connections, ${settings.durationSeconds} s per shape, ${machine.cores} cores`
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">` +
    `<rect width="100%" height="100%" fill="white"/><text x="10" y="24" font-size="14">${escape(title)}</text>` +
    PANELS.map(panel).join('') + legend(labelWidth + (PANELS.length % columns) * panelWidth, top + Math.floor(PANELS.length / columns) * panelHeight) +
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
