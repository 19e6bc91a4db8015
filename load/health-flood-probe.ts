// The /health probe of `load/health-flood.ts --why`: probe-child.ts's loop, plus, around each probe, the
// scheduler's account (/proc/TID/schedstat: ns on a CPU, ns runnable but waiting on a run queue) of thumbd's
// main thread and of this probe's own thread. A slow probe is then either the main thread busy (on a CPU
// for most of it), or runnable but not scheduled (waiting on a run queue), or the probe itself starved.
// Prints one JSON line: one row per probe when stdin closes.
import { readFileSync } from 'node:fs'
import { Agent, get } from 'node:http'

const [base, everyMs, serverPid] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])]
const agent = new Agent({ keepAlive: true, maxSockets: 1 })
const check = (path: string) => new Promise<number>(resolve => {
  const request = get(`${base}${path}`, { agent, timeout: 10_000 }, res => res.resume().on('end', () => resolve(res.statusCode ?? 0)))
  request.on('timeout', () => request.destroy())
  request.on('error', () => resolve(0))
})

/** [ns on a CPU, ns waiting on a run queue] of one thread. */
const schedstat = (pid: number): [number, number] => {
  const [onCpu, waiting] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')
  return [Number(onCpu), Number(waiting)]
}
/** Involuntary context switches of one thread: times it was preempted. */
const preempted = (pid: number) => Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8'))![1])
/** Tasks runnable on the whole machine right now (/proc/loadavg's 4th field, before the slash). */
const runnable = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[3]!.split('/')[0])

/** Per probe: at (epoch ms), ms, status, server on-CPU ms, server run-queue ms, server preemptions, probe on-CPU ms, probe run-queue ms, runnable tasks after. */
const rows: number[][] = []
const stopped = new AbortController()
process.stdin.on('end', () => stopped.abort()).resume()
for (let i = 0; i < 3; i++) await check('/health/live')
while (!stopped.signal.aborted) {
  const server0 = schedstat(serverPid)
  const preempted0 = preempted(serverPid)
  const self0 = schedstat(process.pid)
  const started = performance.now()
  const status = await check('/health')
  const ms = performance.now() - started
  const server1 = schedstat(serverPid)
  const self1 = schedstat(process.pid)
  const ns = (a: number, b: number) => +((b - a) / 1e6).toFixed(2)
  rows.push([+(performance.timeOrigin + started).toFixed(1), +ms.toFixed(2), status, ns(server0[0], server1[0]), ns(server0[1], server1[1]), preempted(serverPid) - preempted0,
    ns(self0[0], self1[0]), ns(self0[1], self1[1]), runnable()])
  await new Promise(resolve => setTimeout(resolve, everyMs))
}
process.stdout.write(JSON.stringify(rows) + '\n')
