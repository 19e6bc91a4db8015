// Reads /proc for the server's whole process tree (cluster workers, ffmpeg children): peak RSS summed over
// all of them, and CPU time over wall time (= cores used). A child reaped during the run moves its CPU time
// into its parent's cutime/cstime, so summing utime+stime+cutime+cstime over the live tree stays consistent.
import { readdirSync, readFileSync } from 'node:fs'

export const CLOCK_TICKS_PER_SECOND = 100
const PAGE_BYTES = 4096

/** `comm`: the command name (at most 15 characters); `state`: R, S, D, Z (zombie) ... */
export interface ProcStat { pid: number, ppid: number, comm: string, state: string, cpuTicks: number, rssBytes: number }

export function processStat (pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    const nameEnd = text.lastIndexOf(')')
    const fields = text.slice(nameEnd + 2).split(' ')
    const n = (i: number) => Number(fields[i - 3])
    return { pid, ppid: n(4), comm: text.slice(text.indexOf('(') + 1, nameEnd), state: fields[0]!, cpuTicks: n(14) + n(15) + n(16) + n(17), rssBytes: n(24) * PAGE_BYTES }
  } catch {
    return undefined // gone between listing and reading
  }
}

export function processTree (root: number): ProcStat[] {
  const all = readdirSync('/proc').filter(name => /^\d+$/.test(name)).map(name => processStat(Number(name))).filter(s => s !== undefined)
  const children = new Map<number, ProcStat[]>()
  for (const stat of all) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat])
  const tree: ProcStat[] = []
  const rootStat = all.find(s => s.pid === root)
  for (let queue = rootStat === undefined ? [] : [rootStat]; queue.length > 0;) {
    const next = queue.shift()!
    tree.push(next)
    queue = queue.concat(children.get(next.pid) ?? [])
  }
  return tree
}

/** CPU seconds of a process and its live descendants (the reaped ones are in their parents' cutime/cstime). */
export function treeCpuSeconds (root: number): number {
  return processTree(root).reduce((sum, s) => sum + s.cpuTicks, 0) / CLOCK_TICKS_PER_SECOND
}

export function startSampler (root: number, everyMs = 200) {
  const cpu = () => treeCpuSeconds(root)
  const startedCpu = cpu()
  const startedAt = performance.now()
  let peakRssBytes = 0
  const sample = () => { peakRssBytes = Math.max(peakRssBytes, processTree(root).reduce((sum, s) => sum + s.rssBytes, 0)) }
  sample()
  const timer = setInterval(sample, everyMs)
  return {
    stop () {
      clearInterval(timer)
      sample()
      const wallSeconds = (performance.now() - startedAt) / 1000
      return { peakRssBytes, coresUsed: (cpu() - startedCpu) / wallSeconds }
    }
  }
}
