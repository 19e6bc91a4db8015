// Interactive traffic first: a job's step goes to the pool only while no request waits there, a thread is free
// and admission's expected wait is at most half its bound; while requests run, background steps leave at least
// one thread to them. A step runs as background work (app.jobs.run's `background`): one decoder thread, and
// outside admission, so it neither raises the wait requests are estimated at nor gets a request refused; the
// rule here is what keeps it off a busy pool instead. Requests that come meanwhile are queued ahead of the
// job's next step. Queued jobs, in the engine, count nowhere: not in /health, not in admission.
import type { FastifyInstance } from 'fastify'
import type { JobResults, JobTask } from '../../contract/types.ts'

const POLL_MS = 25

const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((resolve, reject) => {
  const timer = setTimeout(resolve, ms)
  signal.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason) }, { once: true })
})

export function createCapacity (app: FastifyInstance, threads: number, maxQueueWaitMs: number) {
  const free = () => {
    const { queued, running, background } = app.jobs.stats()
    if (queued > 0 || running >= threads || app.admission.expectedWaitMs() > maxQueueWaitMs / 2) return false
    // Requests in the pool: background steps may hold at most all threads but one (JOB_CONCURRENCY bounds them too).
    return running - background === 0 || background < threads - 1
  }

  /** Runs one step of a job when the pool has room for it. */
  async function run<T extends JobTask> (task: T, signal: AbortSignal): Promise<JobResults[T['kind']]> {
    for (;;) {
      signal.throwIfAborted()
      if (free()) return (await app.jobs.run(task, { signal, background: true })).value
      await sleep(POLL_MS, signal)
    }
  }

  return { run, free }
}

export type Capacity = ReturnType<typeof createCapacity>
