// Interactive traffic first: a job's step goes to the pool only while no request waits there, a thread is free
// and admission's expected wait is at most half its bound. A step in the pool then counts in admission like a
// request (it holds a thread), so this keeps that count to a step or two (JOB_CONCURRENCY) on a pool that was
// idle, and requests that come meanwhile are queued ahead of the job's next step. Queued jobs, in the engine,
// count nowhere: not in /health, not in admission.
import type { FastifyInstance } from 'fastify'
import { codeOf, ThumbdError } from '../errors.ts'
import type { JobResults, JobTask } from '../../contract/types.ts'

const POLL_MS = 25

const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((resolve, reject) => {
  const timer = setTimeout(resolve, ms)
  signal.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason) }, { once: true })
})

export function createCapacity (app: FastifyInstance, threads: number, maxQueueWaitMs: number) {
  const free = () => {
    const stats = app.jobs.stats()
    return stats.queued === 0 && stats.running < threads && app.admission.expectedWaitMs() <= maxQueueWaitMs / 2
  }

  /** Runs one step of a job when the pool has room for it; a step refused by admission (a burst came) waits and goes again. */
  async function run<T extends JobTask> (task: T, signal: AbortSignal): Promise<JobResults[T['kind']]> {
    for (;;) {
      signal.throwIfAborted()
      if (!free()) {
        await sleep(POLL_MS, signal)
        continue
      }
      try {
        return (await app.jobs.run(task, { signal })).value
      } catch (err) {
        if (!(err instanceof ThumbdError && codeOf(err) === 'OVERLOADED') || signal.aborted) throw err
      }
    }
  }

  return { run, free }
}

export type Capacity = ReturnType<typeof createCapacity>
