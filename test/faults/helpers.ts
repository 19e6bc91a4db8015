// Helpers for tests that put the service under load or break it, always on loopback and bounded.
import { readdirSync, readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { processStat, type ProcStat } from '../../load/sampler.ts'
import { TOOL_MARKER } from '../../workers/tools/index.ts'
import { AUTH } from '../helper.ts'

export async function listen (app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return `http://127.0.0.1:${address.port}`
}

export interface Reply { status: number, headers: Headers, body: Buffer }

export async function upload (base: string, route: string, body: Buffer, query = '', signal?: AbortSignal, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(`${base}/api/${route}${query}`, { method: 'POST', body: new Uint8Array(body), headers: { ...AUTH, 'content-type': 'application/octet-stream', ...headers }, signal })
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) }
}

/** Polls /health until stopped; returns every latency in ms and every status. */
export function healthProbe (base: string, everyMs = 25) {
  const latencies: number[] = []
  const statuses: number[] = []
  const stopped = new AbortController()
  const done = (async () => {
    while (!stopped.signal.aborted) {
      const started = performance.now()
      const res = await fetch(`${base}/health`)
      await res.arrayBuffer()
      latencies.push(performance.now() - started)
      statuses.push(res.status)
      await new Promise(resolve => setTimeout(resolve, everyMs))
    }
  })()
  return { latencies, statuses, stop: async () => { stopped.abort(); await done } }
}

/** A file of /proc/<pid> as text; empty if the process is gone (or a zombie, whose environ reads empty). */
export function procText (pid: number, file: 'environ' | 'cmdline' | 'status'): string {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'latin1')
  } catch {
    return ''
  }
}

/** The names in a process's environment block. */
export function environNames (pid: number): string[] {
  return procText(pid, 'environ').split('\0').filter(Boolean).map(entry => entry.slice(0, entry.indexOf('=')))
}

/**
 * Every process of server `pid`'s tools, found by the marker the server puts in every tool's environment
 * (TOOL_MARKER): the tools, the zygotes (started with it), the Node launchers (which pass it on: it is on
 * their command line). All of /proc is searched, not the server's process tree: a decoder that escaped its
 * helper and was re-parented is found all the same.
 */
export function toolProcesses (pid = process.pid): ProcStat[] {
  const inEnviron = `\0${TOOL_MARKER}=${pid}\0`
  const onCommandLine = `"${TOOL_MARKER}":"${pid}"`
  return readdirSync('/proc').filter(name => /^\d+$/.test(name)).map(Number).filter(other =>
    `\0${procText(other, 'environ')}`.includes(inEnviron) || procText(other, 'cmdline').includes(onCommandLine)
  ).map(other => processStat(other)).filter(stat => stat !== undefined)
}

/**
 * Server `pid`'s running decoders: ffmpeg, ffprobe, heif-decode (not the zygotes: the ffmpeg ones are named
 * "ffmpeg-zygote" once serving, heif-decode's keeps its name, and they are the only tool processes the server
 * starts itself, so a zygote is the server's child and a job's decoder never is).
 */
export function decoderProcesses (pid = process.pid): ProcStat[] {
  return toolProcesses(pid).filter(p => /^(ffmpeg|ffprobe|heif-decode)$/.test(p.comm) && p.ppid !== pid && p.state !== 'Z')
}

/** The names of server `pid`'s running decoders, wherever they are in the process tree. */
export function decoderChildren (pid = process.pid): string[] {
  return decoderProcesses(pid).map(p => p.comm)
}

/** Whether process pid is gone (or a zombie, killed and not yet reaped) within `within` ms. */
export async function gone (pid: number, within = 3000) {
  const until = Date.now() + within
  while (Date.now() < until) {
    const state = processStat(pid)?.state
    if (state === undefined || state === 'Z') return true
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  return false
}

export async function waitFor (check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

export const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/** The threads of this process by name (Linux /proc), each with its nice value. */
export function threadNiceness (): Array<{ name: string, nice: number }> {
  return readdirSync('/proc/self/task').flatMap(tid => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      // Fields after the parenthesised name; nice is field 19 of stat, the 17th after the name.
      const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return [{ name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(after[16]) }]
    } catch {
      return [] // the thread ended since the listing
    }
  })
}
