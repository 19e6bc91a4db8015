// Admission control: the queue is bounded by expected wait, not by count. Each job submitted to the pool
// reserves the recent mean run time of its kind (of every run: failed and timed-out ones too, and runs their
// client cut short as a lower bound) until it is done; a request whose wait (reserved work / threads) would
// pass MAX_QUEUE_WAIT_MS is refused with 503 and a Retry-After from that estimate.
// Checked twice: in onRequest, before any body byte is read, so most refusals cost almost nothing; and when
// the job is submitted, after intake. At onRequest, uploads in progress whose bodies come fast (at least
// INTAKE_BYTES_PER_SECOND on average since their head) count too, each as its kind's estimate: they are jobs
// a moment from now. For MAX_QUEUE_WAIT_MS at most: an upload still coming after that counts no more, or a
// few long fast uploads would refuse everyone else for minutes. An average, not each window's rate: the
// server's own stalls (its disk writes, on libuv's niced threads, under load) must not make an upload look
// slow. Without them, 200 clients that start 12 MB uploads at once were all admitted (nothing was queued
// yet), and the main thread took in, hashed and spooled 2.4 GB only to refuse most at submission, in loop
// turns of 20-120 ms (measured: /health p99 25.5-62.9 ms without them, 5.2-5.7 with them, `node
// load/health-flood.ts`; architecture.md, "Why it is fast"). A slow upload (a phone on a bad network, or
// an attacker's drip) does not count: it holds no capacity that others need (src/plugins/slow-clients.ts
// cuts those below the rate floor).
// Hand-written: this is thumbd's own policy (like imgproxy's workers.go), not a library concern.
import { Socket } from 'node:net'
import type { FastifyReply, FastifyRequest } from 'fastify'
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
      /** onRequest hook for job routes: refuses while the queue (and the fast uploads in progress) is past its bound. */
      admit (request: FastifyRequest, reply: FastifyReply): Promise<void>
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
const INITIAL_ESTIMATE_MS: Record<JobKind, number> = { thumbnail: 300, resize: 150, perceptual: 300, info: 50, storyboard: 3000, preview: 1000, 'video-set': 3000 }
/** Weight of the newest sample in the moving average. */
const ALPHA = 0.2
const MAX_RETRY_AFTER_SECONDS = 60
/** How fast an upload in progress must come, on average since its head, to count as queued work; checked this often. */
export const INTAKE_BYTES_PER_SECOND = 256 << 10
export const INTAKE_TICK_MS = 50
const INTAKE_TICK_BYTES = INTAKE_BYTES_PER_SECOND * INTAKE_TICK_MS / 1000

/**
 * An admitted upload still coming in: it counts while it keeps the rate (at first: if a tick's worth came with its
 * head). `heldMs`: the time the server itself held its socket paused, which is not the client's.
 */
interface Intake { socket: Socket, estimateMs: number, startedAt: number, bytesAtStart: number, heldMs: number, counted: boolean }

export default fp<{ config: Config }>(async (app, { config }) => {
  const threads = config.executionMode === 'pool' ? config.poolThreads : 1
  const estimateMs = { ...INITIAL_ESTIMATE_MS }
  let reservedMs = 0

  const expectedWaitMs = () => reservedMs / threads

  const intakes = new Set<Intake>()
  let intakeMs = 0
  let ticker: NodeJS.Timeout | undefined
  let lastTickAt = 0
  const count = (intake: Intake, counted: boolean) => {
    if (counted !== intake.counted) intakeMs += counted ? intake.estimateMs : -intake.estimateMs
    intake.counted = counted
  }
  // One timer for every upload in progress: under a flood, hundreds.
  const tick = () => {
    const now = performance.now()
    const sinceLastTickMs = now - lastTickAt
    lastTickAt = now
    for (const intake of intakes) {
      const elapsedMs = now - intake.startedAt
      // An upload still coming after the queue's bound is no job "a moment from now": it counts no more. Else a
      // few long fast uploads (128 MiB at 1 MB/s: minutes) would refuse every other request all that time.
      if (elapsedMs >= config.maxQueueWaitMs) forget(intake)
      // Paused by the server (its body's reader is behind: the temp file's open and writes on libuv's niced
      // threads, under load): the client's pace is unknown meanwhile, and it keeps its count. Judged on those
      // times, uploads sent at 12.8 MB/s beside stress-ng read as below the rate (0.13 MB read, paused), and the
      // request behind them was admitted.
      else if (intake.socket.isPaused()) intake.heldMs += Math.min(sinceLastTickMs, elapsedMs)
      else if (elapsedMs - intake.heldMs >= INTAKE_TICK_MS) count(intake, (intake.socket.bytesRead - intake.bytesAtStart) * 1000 >= INTAKE_BYTES_PER_SECOND * (elapsedMs - intake.heldMs))
    }
  }
  const forget = (intake: Intake) => {
    if (!intakes.delete(intake)) return
    count(intake, false)
    if (intakes.size > 0) return
    clearInterval(ticker)
    ticker = undefined
  }

  function refuseIfFull (kind: JobKind, waitMs = expectedWaitMs()) {
    app.metrics.expectedWait.set(waitMs / 1000)
    if (waitMs <= config.maxQueueWaitMs) return
    app.metrics.shed.inc({ reason: 'queue' })
    app.metrics.jobs.inc({ kind, outcome: 'shed' })
    const retryAfter = Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil((waitMs - config.maxQueueWaitMs) / 1000)))
    throw Object.assign(new errors.Overloaded(), { retryAfter })
  }

  async function admit (request: FastifyRequest, reply: FastifyReply) {
    const kind = request.routeOptions.config.jobKind
    if (kind === undefined) return
    refuseIfFull(kind, (reservedMs + intakeMs) / threads)
    const { raw } = request
    const { socket } = raw
    if (raw.complete || !(socket instanceof Socket)) return
    const intake: Intake = { socket, estimateMs: estimateMs[kind], startedAt: performance.now(), bytesAtStart: socket.bytesRead, heldMs: 0, counted: false }
    // What came with the head (a client that sends its body at once) counts from now, not from the next tick.
    count(intake, raw.readableLength >= INTAKE_TICK_BYTES)
    intakes.add(intake)
    if (ticker === undefined) {
      lastTickAt = performance.now()
      ticker = setInterval(tick, INTAKE_TICK_MS).unref()
    }
    const done = () => forget(intake)
    raw.once('end', done)
    reply.raw.once('close', done)
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
