// Every counter and gauge thumbd keeps, in one place, exported as Prometheus text on GET /metrics.
// One registry per app instance (tests build several apps in one process).
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
export type { OutcomeLabel as JobOutcomeLabel } from '../../contract/error-codes.ts'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export type ShedReason = 'queue' | 'event_loop_delay' | 'memory' | 'draining' | 'fetches'

export function createMetrics () {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 })
  const seconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
  return {
    registry,
    httpDuration: new Histogram({ name: 'thumbd_http_request_duration_seconds', help: 'HTTP request duration by route and status', labelNames: ['method', 'route', 'status_code'], buckets: seconds, registers: [registry] }),
    jobs: new Counter({ name: 'thumbd_jobs_total', help: 'Jobs by kind and outcome (ok, refused, shed, cancelled, timeout, crashed, error)', labelNames: ['kind', 'outcome'], registers: [registry] }),
    jobRun: new Histogram({ name: 'thumbd_job_run_seconds', help: 'Time a job ran in a worker', labelNames: ['kind'], buckets: seconds, registers: [registry] }),
    jobWait: new Histogram({ name: 'thumbd_job_wait_seconds', help: 'Time a job waited for a worker', labelNames: ['kind'], buckets: seconds, registers: [registry] }),
    shed: new Counter({ name: 'thumbd_shed_total', help: 'Requests refused with 503 before any work, by reason', labelNames: ['reason'], registers: [registry] }),
    poolThreads: new Gauge({ name: 'thumbd_pool_threads', help: 'Worker threads in the pool', registers: [registry] }),
    poolQueue: new Gauge({ name: 'thumbd_pool_queue_size', help: 'Jobs waiting for a worker', registers: [registry] }),
    poolRunning: new Gauge({ name: 'thumbd_pool_running', help: 'Jobs running in a worker', registers: [registry] }),
    poolUtilization: new Gauge({ name: 'thumbd_pool_utilization', help: 'Share of pool capacity in use since start (piscina)', registers: [registry] }),
    expectedWait: new Gauge({ name: 'thumbd_admission_expected_wait_seconds', help: 'Expected wait of a newly admitted job', registers: [registry] }),
    ffmpegChildren: new Gauge({ name: 'thumbd_ffmpeg_children', help: 'ffmpeg/ffprobe processes running now', registers: [registry] }),
    rangeRequests: new Counter({ name: 'thumbd_range_requests_total', help: 'Range requests made to origins for remote videos', registers: [registry] }),
    toolsInfo: new Gauge({ name: 'thumbd_tools_info', help: 'The decoders of this host: the ffmpeg build and what confines a decoder (1; for operators, not on /health)', labelNames: ['ffmpeg', 'sandbox'], registers: [registry] }),
    resultMemo: new Counter({ name: 'thumbd_result_memo_total', help: 'GET URL requests by whether a recent reply kept in memory answered them (hit) or not (miss)', labelNames: ['outcome'], registers: [registry] }),
    resultStoreReads: new Counter({ name: 'thumbd_result_store_reads_total', help: 'GET URL lookups in the result store (RESULT_STORAGE) by store and outcome: hit, miss, error, timeout (error and timeout are served as misses)', labelNames: ['store', 'outcome'], registers: [registry] }),
    resultStoreWrites: new Counter({ name: 'thumbd_result_store_writes_total', help: 'GET URL results written to the result store after their reply, by store and outcome: ok, error, skipped (too many writes under way, or too large)', labelNames: ['store', 'outcome'], registers: [registry] }),
    resultStoreEvictions: new Counter({ name: 'thumbd_result_store_evictions_total', help: 'Entries a file:// result store removed to stay within RESULT_STORAGE_BYTES', labelNames: ['store'], registers: [registry] }),
    asyncJobs: new Gauge({ name: 'thumbd_async_jobs', help: 'Asynchronous jobs (POST /api/jobs) in the queue engine, by state (queued, running, done, failed, cancelled; done and failed are kept for 7 days); every replica reports the shared queue', labelNames: ['state'], registers: [registry] }),
    asyncJobOldestAge: new Gauge({ name: 'thumbd_async_job_oldest_queued_seconds', help: 'Age of the oldest asynchronous job still waiting to run (0: none waits)', registers: [registry] }),
    asyncJobsEnded: new Counter({ name: 'thumbd_async_jobs_ended_total', help: 'Asynchronous jobs this replica ended, by state (done, failed)', labelNames: ['state'], registers: [registry] }),
    webhooks: new Counter({ name: 'thumbd_webhooks_total', help: 'Webhook deliveries this replica attempted, by outcome (ok, error: retried by the queue)', labelNames: ['outcome'], registers: [registry] }),
    rangeBytes: new Counter({ name: 'thumbd_range_bytes_total', help: 'Bytes asked of origins by range requests for remote videos', registers: [registry] })
  }
}

export type Metrics = ReturnType<typeof createMetrics> & {
  /** Gauges that are read at scrape time (pool figures) register their refresh here. */
  beforeScrape (refresh: () => void): void
  /** The exposition text, gauges refreshed. */
  scrape (): Promise<{ contentType: string, text: string }>
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

export interface MetricsOptions {
  /** Where GET /metrics is served: 'api' (the app's own routes) or 'own-listener' (server.ts, METRICS_PORT). */
  serve: 'api' | 'own-listener'
}

export default fp<MetricsOptions>(async (app, { serve }) => {
  const refreshers: Array<() => void> = []
  const metrics: Metrics = {
    ...createMetrics(),
    beforeScrape: refresh => { refreshers.push(refresh) },
    scrape: async () => {
      for (const refresh of refreshers) refresh()
      return { contentType: metrics.registry.contentType, text: await metrics.registry.metrics() }
    }
  }
  app.decorate('metrics', metrics)

  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, not the URL, so query strings and 404 probes cannot explode the label set.
    const route = request.routeOptions.url ?? 'unmatched'
    metrics.httpDuration.observe({ method: request.method, route, status_code: reply.statusCode }, reply.elapsedTime / 1000)
  })

  // On a listener of its own, /metrics is not on the API port at all: the build and sandbox state it shows
  // (thumbd_tools_info) reach only whoever reaches that port.
  if (serve === 'api') app.get('/metrics', { schema: METRICS_ROUTE_SCHEMA }, metricsHandler(metrics))
}, { name: 'metrics' })

const METRICS_ROUTE_SCHEMA = { summary: 'Prometheus metrics (text exposition format)', tags: ['health'] }

function metricsHandler (metrics: Metrics) {
  return async (_request: FastifyRequest, reply: FastifyReply) => {
    const { contentType, text } = await metrics.scrape()
    return reply.type(contentType).send(text)
  }
}

/** The METRICS_PORT listener: GET /metrics and nothing else (server.ts listens on it and closes it). */
export function metricsServer (metrics: Metrics): FastifyInstance {
  const server = Fastify({ logger: false })
  server.get('/metrics', metricsHandler(metrics))
  return server
}
