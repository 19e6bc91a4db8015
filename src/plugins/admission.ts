// Admission control: the queue is bounded by expected wait, not by count. Each job submitted to the pool
// reserves the recent mean run time of its kind (of every run: failed and timed-out ones too, and runs their
// client cut short as a lower bound) until it is done; a request whose wait (reserved work / threads) would pass MAX_QUEUE_WAIT_MS is refused with 503 and
// a Retry-After from that estimate.
// Checked twice: in onRequest, before any body byte is read, so most refusals cost almost nothing; and when
// the job is submitted, after intake. Only jobs reserve: a client still uploading (slowly, maybe: a phone on
// a bad network, or an attacker) holds no capacity that others need (src/plugins/slow-clients.ts cuts those
// below the rate floor).
// Hand-written: this is thumbd's own policy (like imgproxy's workers.go), not a library concern.
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.ts'
import { errors } from '../errors.ts'
import type { JobTask } from '../../contract/types.ts'

export type JobKind = JobTask['kind']

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Job routes name the kind of job they run, for admission. */
    jobKind?: JobKind
  }
  interface FastifyInstance {
    admission: {
      /** onRequest hook for job routes: refuses while the queue is past its bound. */
      admit (request: FastifyRequest): Promise<void>
      /** At a job's submission: refuses as admit does, else reserves its estimate. Call the result when the job is done. */
      reserve (kind: JobKind): () => void
      /** Feeds a finished job's run time (ok, failed or timed out; its thread time) into its kind's estimate. */
      record (kind: JobKind, runMs: number): void
      /** Feeds a run cut short (its client left) as a lower bound: raises the estimate to it, never lowers it. */
      recordAtLeast (kind: JobKind, runMs: number): void
      expectedWaitMs (): number
    }
  }
}

/** Estimates before any job of a kind has run (measured on 2 cores: images ~50-150 ms, video frames ~300 ms). */
const INITIAL_ESTIMATE_MS: Record<JobKind, number> = { thumbnail: 300, resize: 150, perceptual: 300, info: 50, storyboard: 3000, preview: 1000 }
/** Weight of the newest sample in the moving average. */
const ALPHA = 0.2
const MAX_RETRY_AFTER_SECONDS = 60

export default fp<{ config: Config }>(async (app, { config }) => {
  const threads = config.executionMode === 'pool' ? config.poolThreads : 1
  const estimateMs = { ...INITIAL_ESTIMATE_MS }
  let reservedMs = 0

  const expectedWaitMs = () => reservedMs / threads

  function refuseIfFull (kind: JobKind) {
    const waitMs = expectedWaitMs()
    app.metrics.expectedWait.set(waitMs / 1000)
    if (waitMs <= config.maxQueueWaitMs) return
    app.metrics.shed.inc({ reason: 'queue' })
    app.metrics.jobs.inc({ kind, outcome: 'shed' })
    const retryAfter = Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil((waitMs - config.maxQueueWaitMs) / 1000)))
    throw Object.assign(new errors.Overloaded(), { retryAfter })
  }

  async function admit (request: FastifyRequest) {
    const kind = request.routeOptions.config.jobKind
    if (kind !== undefined) refuseIfFull(kind)
  }

  function reserve (kind: JobKind) {
    refuseIfFull(kind)
    const reserved = estimateMs[kind]
    reservedMs += reserved
    let released = false
    return () => {
      if (!released) reservedMs -= reserved
      released = true
    }
  }

  function record (kind: JobKind, runMs: number) {
    // A job ends at its deadline (give or take the kill's grace): no job costs more than that.
    estimateMs[kind] += ALPHA * (Math.min(runMs, config.jobTimeoutMs) - estimateMs[kind])
  }

  function recordAtLeast (kind: JobKind, runMs: number) {
    // It would have cost at least this much: a client that starts costly jobs and leaves must not keep the
    // estimate low, and one that leaves at once (a short run) must not talk it down.
    if (Math.min(runMs, config.jobTimeoutMs) > estimateMs[kind]) record(kind, runMs)
  }

  app.decorate('admission', { admit, reserve, record, recordAtLeast, expectedWaitMs })
}, { name: 'admission', dependencies: ['metrics'] })
