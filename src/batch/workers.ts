// The engine's worker pattern: one handler per queue. The media queue's takes JOB_CONCURRENCY jobs at a time on
// this replica, each under a lease it renews while it runs (engine.ts); the webhook queue's delivers one webhook
// per job, each a job of its own, retried with backoff by the engine.
import type { FastifyBaseLogger } from 'fastify'
import type { JobResult as EngineResult, JobWithMetadata } from 'pg-boss'
import type { Config } from '../config.ts'
import { MEDIA_QUEUE, WEBHOOK_QUEUE } from './engine.ts'
import { announce } from './announce.ts'
import { jobError } from './failures.ts'
import { cleanUp, runMediaJob, type JobResult, type MediaJobContext } from './media-job.ts'
import type { MediaJobData } from './spec.ts'
import type { WebhookTask } from './webhook.ts'

export interface WorkerHooks {
  deliver (task: WebhookTask): Promise<void>
  /** Counts each job this replica ended, by how. */
  ended (state: 'done' | 'failed'): void
}

export async function startWorkers (context: MediaJobContext, config: Config, log: FastifyBaseLogger, hooks: WorkerHooks) {
  const { boss } = context.engine

  async function handle (job: JobWithMetadata<MediaJobData>): Promise<EngineResult> {
    let result: JobResult
    try {
      result = await runMediaJob(context, { id: job.id, data: job.data, signal: job.signal })
    } catch (err) {
      // Another attempt may mend it (a timeout, a store or origin that failed): the engine retries after its backoff.
      if (job.retryCount < job.retryLimit || job.signal.aborted) throw err
      log.warn({ err, job: job.id }, 'an asynchronous job failed its last attempt')
      result = { state: 'failed', outputs: [], error: jobError(err) }
    }
    await announce(boss, job.id, job.data.webhook, result)
    await cleanUp(config, context.app.stores, context.engine, job.id, job.data)
    hooks.ended(result.state)
    // A failure that retries cannot mend ends the job at once, past any attempts left.
    return { id: job.id, status: result.state === 'done' ? 'completed' : 'deadletter', output: result }
  }

  if (config.jobConcurrency > 0) {
    await boss.work<MediaJobData>(MEDIA_QUEUE, {
      localConcurrency: config.jobConcurrency,
      batchSize: 1,
      pollingIntervalSeconds: 1,
      includeMetadata: true,
      perJobResults: true
    }, async ([job]) => [await handle(job as unknown as JobWithMetadata<MediaJobData>)])
  }
  await boss.work<WebhookTask>(WEBHOOK_QUEUE, { localConcurrency: 2, batchSize: 1, pollingIntervalSeconds: 1 }, async ([job]) => {
    await hooks.deliver(job!.data)
  })
}
