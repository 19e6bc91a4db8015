// Asynchronous jobs (POST /api/jobs): the queue engine, opened when needed, and this replica's workers. The
// embedded queue is loaded lazily: a server that never took a job carries none of it (PGlite on its thread is ~130 MB of RSS),
// and one whose JOBS_DATA_DIR holds a database opens it at start, so its queued jobs resume. A shared server
// (JOBS_QUEUE) is opened at start: this replica may have jobs to run that others took.
import fp from 'fastify-plugin'
import type { Config } from '../config.ts'
import { createCapacity } from '../batch/capacity.ts'
import { embeddedDatabaseExists, openEngine, type Engine } from '../batch/engine.ts'
import { createProgressTable } from '../batch/progress.ts'
import { dropStaleProgress, readQueueFigures } from '../batch/queue-figures.ts'
import { createJobService, type JobService } from '../batch/service.ts'
import { createWebhookSender } from '../batch/webhook.ts'
import { startWorkers } from '../batch/workers.ts'
import { parseAllowedSources } from '../sources/url-policy.ts'

declare module 'fastify' {
  interface FastifyInstance {
    batch: JobService & {
      /** Whether the engine is open (tests, /metrics). */
      opened (): boolean
    }
  }
}

const FIGURES_EVERY_MS = 15_000

export default fp<{ config: Config }>(async (app, { config }) => {
  const policy = { allowPrivate: config.allowPrivateSources, allowedPrefixes: parseAllowedSources(config.allowedSources) }
  const webhooks = createWebhookSender(policy, config.webhookSigningKeys)
  const capacity = createCapacity(app, config.executionMode === 'pool' ? config.poolThreads : 1, config.maxQueueWaitMs)
  let opening: Promise<Engine> | undefined
  let opened: Engine | undefined
  let timer: NodeJS.Timeout | undefined
  let closed = false

  async function open (): Promise<Engine> {
    const engine = await openEngine(config, err => app.log.error({ err }, 'job queue engine error'))
    if (closed) {
      await engine.close()
      throw new Error('closed while the job queue opened')
    }
    try {
      await start(engine)
    } catch (err) {
      await engine.close()
      throw err
    }
    opened = engine
    app.log.info({ queue: engine.embedded ? `embedded (${config.jobsDataDir})` : 'shared PostgreSQL' }, 'job queue open')
    return engine
  }

  async function start (engine: Engine) {
    await createProgressTable(engine)
    await startWorkers({ app, config, engine, capacity }, config, app.log, {
      deliver: async task => {
        try {
          await webhooks.deliver(task)
          app.metrics.webhooks.inc({ outcome: 'ok' })
        } catch (err) {
          app.metrics.webhooks.inc({ outcome: 'error' })
          throw err
        }
      },
      ended: state => app.metrics.asyncJobsEnded.inc({ state })
    })
    const refresh = async () => {
      const figures = await readQueueFigures(engine)
      for (const [state, n] of Object.entries(figures.byState)) app.metrics.asyncJobs.set({ state }, n)
      app.metrics.asyncJobOldestAge.set(figures.oldestQueuedSeconds)
      await dropStaleProgress(engine)
    }
    await refresh()
    timer = setInterval(() => { refresh().catch(err => app.log.warn({ err }, 'could not read the job queue\'s figures')) }, FIGURES_EVERY_MS).unref()
  }

  const engine = () => {
    opening ??= open().catch(err => {
      opening = undefined
      throw err
    })
    return opening
  }

  app.decorate('batch', { ...createJobService(config, policy, app.stores, engine, url => { webhooks.check(url) }), opened: () => opened !== undefined })

  app.addHook('onReady', async () => {
    if (config.jobsQueue !== '' || embeddedDatabaseExists(config)) await engine()
  })
  app.addHook('preClose', async () => {
    closed = true
    clearInterval(timer)
    // Running jobs stop with the pool; their leases lapse and another replica (or the next start) runs them again.
    await (await opening?.catch(() => undefined))?.close()
    await webhooks.close()
  })
}, { name: 'batch', dependencies: ['jobs', 'sources', 'metrics', 'admission', 'media-tools', 'temp-files'] })
