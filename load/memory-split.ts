// The memory of the server's process tree during one request, two ways, and who holds it at each peak.
// - sum of RSS (what sampler.ts' startSampler reports): every process's resident pages, so a page a forked
//   ffmpeg shares with its zygote (libraries, the zygote's heap) counts in both;
// - the server's RSS plus its helpers' PSS (issue 35's measure): each shared page divided among its sharers,
//   so it counts once.
// Sampled every `everyMs`; at each new peak the per-process split is kept (RSS and PSS of the server, the
// zygotes, each ffmpeg), to say what a peak is made of.
import { readFileSync } from 'node:fs'
import { processTree } from './sampler.ts'

const MB = 2 ** 20

export interface ProcessMemory { pid: number, name: string, rssBytes: number, pssBytes: number }

function pssBytes (pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024
  } catch {
    return 0 // gone between listing and reading
  }
}

/** Each process of the tree with its RSS and PSS; the root is named "server", the others by their command. */
export function treeMemory (root: number): ProcessMemory[] {
  return processTree(root).map(p => ({ pid: p.pid, name: p.pid === root ? 'server' : p.comm, rssBytes: p.rssBytes, pssBytes: pssBytes(p.pid) }))
}

export interface MemoryPeaks {
  /** Peak of the sum of RSS, and the split at that sample. */
  rss: { bytes: number, split: ProcessMemory[] }
  /** Peak of the server's RSS plus its helpers' PSS, and the split at that sample. */
  honest: { bytes: number, split: ProcessMemory[] }
}

export function startMemorySplit (root: number, everyMs = 20) {
  const peaks: MemoryPeaks = { rss: { bytes: 0, split: [] }, honest: { bytes: 0, split: [] } }
  const sample = () => {
    const tree = treeMemory(root)
    const rss = tree.reduce((sum, p) => sum + p.rssBytes, 0)
    const honest = tree.reduce((sum, p) => sum + (p.pid === root ? p.rssBytes : p.pssBytes), 0)
    if (rss > peaks.rss.bytes) peaks.rss = { bytes: rss, split: tree }
    if (honest > peaks.honest.bytes) peaks.honest = { bytes: honest, split: tree }
  }
  sample()
  const timer = setInterval(sample, everyMs)
  return {
    stop (): MemoryPeaks {
      clearInterval(timer)
      sample()
      return peaks
    }
  }
}

/** "server 192, ffprobe-zygote 42/17, ffmpeg-zygote 42/12, ffmpeg 212/202" (MB: RSS/PSS; the server's RSS). */
export function describeSplit (split: ProcessMemory[]): string {
  return split.map(p => `${p.name} ${(p.rssBytes / MB).toFixed(0)}${p.name === 'server' ? '' : `/${(p.pssBytes / MB).toFixed(0)}`}`).join(', ')
}
