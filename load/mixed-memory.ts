// node load/mixed-memory.ts [--connections N] [--duration S]: memory under mixed load (issue 35). A fresh
// server as `npm start`; idle, then S seconds of 1080p video uploads, then S seconds of 15 MP photos by URL
// from a loopback origin, N connections each (default 8 and 20). Printed per phase: the server's high-water
// mark (VmHWM) plus its helpers' PSS (zygotes, ffmpeg; PSS so shared pages count once), the peak of that sum
// sampled every 200 ms, the CPU (whole tree) and page faults per answer, and where the server's memory is at
// the phase's end and 5 s after the load (V8 heap and external from its /metrics; anonymous RSS split into malloc's heap and other
// mappings, file-backed RSS, the helpers' PSS split alike, from /proc). `--env NAME=VALUE` (repeatable)
// adds to the server's environment, e.g. `--env GLIBC_TUNABLES=glibc.malloc.arena_max=1` to compare a lever.
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { basename, dirname } from 'node:path'
import { parseArgs } from 'node:util'
import { fire } from './cannon.ts'
import { sampleMedia } from './media.ts'
import { CLOCK_TICKS_PER_SECOND, processTree } from './sampler.ts'
import { envFlags, startServer, warmCompileCache } from './server-process.ts'
import { startStaticServer } from './static-server.ts'

const { values: flags } = parseArgs({ options: { connections: { type: 'string', default: '8' }, duration: { type: 'string', default: '20' }, env: { type: 'string', multiple: true, default: [] } } })
const [connections, seconds] = [Math.min(64, Number(flags.connections)), Math.min(120, Number(flags.duration))]
const MB = 2 ** 20
const IDLE_AFTER_MS = 5000
const extraEnv = envFlags(flags.env)

/** A /proc/PID/status field in bytes (its figures are kB), 0 when the process is gone. */
function statusBytes (pid: number, field: string): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match === null ? 0 : Number(match[1]) * 1024
  } catch {
    return 0
  }
}

function pssBytes (pid: number): number {
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))
    return match === null ? 0 : Number(match[1]) * 1024
  } catch {
    return 0
  }
}

/** CPU seconds of the server's whole tree and the server's minor page faults (its threads'; its reaped children's). */
function work (pid: number): { cpu: number, faults: number } {
  const cpu = processTree(pid).reduce((sum, p) => sum + p.cpuTicks, 0) / CLOCK_TICKS_PER_SECOND
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return { cpu, faults: Number(fields[7]) + Number(fields[8]) }
  } catch {
    return { cpu, faults: 0 }
  }
}

/** The server's anonymous RSS split: malloc's main arena (the brk heap: with one arena, every thread's small and
 * mid-size blocks, libvips' included) against every other anonymous mapping (V8 heaps, thread stacks, blocks
 * glibc mapped apart). */
function anonSplit (pid: number): string {
  let heap = 0
  let other = 0
  let current = ''
  try {
    for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
      if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) current = line.split(/\s+/)[5] ?? ''
      const match = /^Anonymous:\s+(\d+) kB/.exec(line)
      if (match !== null) current === '[heap]' ? heap += Number(match[1]) * 1024 : other += Number(match[1]) * 1024
    }
  } catch {}
  return `malloc heap ${(heap / MB).toFixed(0)}, other anon ${(other / MB).toFixed(0)}`
}

/** The helpers' PSS, anonymous and file-backed apart (a zygote's libraries against its own pages). */
function helperSplit (pid: number): string {
  let anon = 0
  let file = 0
  for (const p of processTree(pid).filter(p => p.pid !== pid)) {
    try {
      const text = readFileSync(`/proc/${p.pid}/smaps_rollup`, 'utf8')
      anon += Number(/^Pss_Anon:\s+(\d+) kB/m.exec(text)?.[1] ?? 0) * 1024
      file += Number(/^Pss_File:\s+(\d+) kB/m.exec(text)?.[1] ?? 0) * 1024
    } catch {}
  }
  return `helpers' PSS anon ${(anon / MB).toFixed(0)}, file ${(file / MB).toFixed(0)}`
}

/** The figure: the server's high-water mark plus the PSS of every process it started. */
function footprint (pid: number): { hwm: number, helpers: number } {
  const helpers = processTree(pid).filter(p => p.pid !== pid).reduce((sum, p) => sum + pssBytes(p.pid), 0)
  return { hwm: statusBytes(pid, 'VmHWM'), helpers }
}

async function metric (base: string, names: string[]): Promise<string> {
  const text = await (await fetch(`${base}/metrics`)).text()
  return names.map(name => {
    const line = text.split('\n').find(l => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    return `${name.replace(/^nodejs_/, '')} ${line === undefined ? '?' : (Number(line.split(' ').pop()) / MB).toFixed(0)}`
  }).join(', ')
}

await warmCompileCache()
const media = await sampleMedia(false)
const statics = await startStaticServer(dirname(media.photo))
const thumbd = await startServer({ EXECUTION_MODE: 'pool', ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${statics.base}/`, ...extraEnv })
const auth = { authorization: `Bearer ${thumbd.apiKey}` }
const phases = {
  video: { url: `${thumbd.base}/api/thumbnail?at=1`, headers: { ...auth, 'content-type': 'video/mp4' }, body: await readFile(media.video) },
  photos: { url: `${thumbd.base}/api/thumbnail`, headers: { ...auth, 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ url: `${statics.base}/${basename(media.photo)}` })) }
}
const report = async (phase: string, peak: number) => {
  const { hwm, helpers } = footprint(thumbd.pid)
  const heap = await metric(thumbd.base, ['nodejs_heap_size_used_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_external_memory_bytes'])
  const rss = ['RssAnon', 'RssFile', 'VmRSS'].map(f => `${f} ${(statusBytes(thumbd.pid, f) / MB).toFixed(0)}`).join(', ')
  process.stdout.write(`${phase}: high-water + helpers' PSS ${((hwm + helpers) / MB).toFixed(0)} MB (helpers ${(helpers / MB).toFixed(0)}), sampled peak ${(peak / MB).toFixed(0)} MB; now ${rss} (${anonSplit(thumbd.pid)}; ${helperSplit(thumbd.pid)}); MB: ${heap}\n`)
}
try {
  await new Promise(resolve => setTimeout(resolve, 2000))
  await report('idle', 0)
  let peak = 0
  const timer = setInterval(() => { const f = footprint(thumbd.pid); peak = Math.max(peak, f.hwm + f.helpers) }, 200)
  for (const [phase, request] of Object.entries(phases)) {
    const before = work(thumbd.pid)
    const result = await fire({ ...request, connections, durationSeconds: seconds }).result
    const after = work(thumbd.pid)
    const ok = result.statusCodeStats['200']?.count ?? 0
    // CPU and page faults per answer: a lever's cost, steadier than ok/s when other work shares the cores.
    const perOk = `${(1000 * (after.cpu - before.cpu) / Math.max(1, ok)).toFixed(0)} ms CPU, ${((after.faults - before.faults) / Math.max(1, ok)).toFixed(0)} page faults per ok`
    process.stdout.write(`${phase}: ${ok} ok (${(ok / result.duration).toFixed(1)}/s), non-200 ${result.non2xx}; ${perOk}\n`)
    await report(phase, peak)
  }
  clearInterval(timer)
  // What stays once the load is over (the trap of one malloc arena, docs/operations.md).
  await new Promise(resolve => setTimeout(resolve, IDLE_AFTER_MS))
  await report(`${IDLE_AFTER_MS / 1000} s after`, peak)
} finally {
  await thumbd.stop()
  await statics.close()
}
