// Runs jobs: in the piscina pool (default), or on the main thread with EXECUTION_MODE=inline so the two
// can be compared. Either way the very same dispatch() runs, with the same cancel/deadline control.
import { performance } from 'node:perf_hooks'
import fp from 'fastify-plugin'
import { Piscina } from 'piscina'
import type { Config } from '../config.ts'
import { handOff, holdSource } from '../jobs/hand-off.ts'
import { createPairing, JOBS_PER_THREAD, type Seat } from '../jobs/pairing.ts'
import { decoderThreads, jobSettings, withDecoderThreads } from '../jobs/settings.ts'
import { codeOf, errors, fromJobFailure, ThumbdError } from '../errors.ts'
import type { JobOutcomeLabel } from './metrics.ts'
import { ERROR_TABLE } from '../../contract/error-codes.ts'
import { cancel, createControl } from '../../contract/control.ts'
import type { FailureCode } from '../../contract/job-error.ts'
import type { Envelope, ImageResult, JobOutcome, JobResults, JobTask, WorkerData } from '../../contract/types.ts'

export interface JobResult<V = ImageResult> {
  value: V
  /** Time between submitting and a worker starting it (includes the thread hop). */
  queueMs: number
  workMs: number
}

export interface JobStats {
  mode: Config['executionMode']
  threads: number
  queued: number
  running: number
  utilization: number
  completed: number
  ffmpegChildren: number
  /** Background steps (RunOptions.background) in the pool now: part of `running` or `queued`. */
  background: number
}

export interface RunOptions {
  /** Aborts the job (the client left). */
  signal?: AbortSignal
  /**
   * A step of an asynchronous job (src/batch/capacity.ts), not a request: its decoder gets one thread even on an
   * idle pool, and it is outside admission (no reservation, not refused, its run time not taught as a request's),
   * since it only starts on capacity requests leave and no request should be refused or wait-estimated for it.
   */
  background?: boolean
}

export interface Jobs {
  run<T extends JobTask> (task: T, options?: RunOptions): Promise<JobResult<JobResults[T['kind']]>>
  stats (): JobStats
}

declare module 'fastify' {
  interface FastifyInstance {
    jobs: Jobs
  }
}

/** How long past its deadline a job may take to report its own TIMEOUT before the main thread stops waiting. */
const DEADLINE_SLACK_MS = 1000
const UTILIZATION_REFRESH_MS = 1000
/** At shutdown, how long cancelled jobs get to kill their children before the threads are terminated. */
const CANCEL_WAIT_MS = 3000

const WORKER_FILE = new URL('../../workers/index.ts', import.meta.url).href

const outcomeOf = (code: FailureCode): JobOutcomeLabel => code === 'CANCELLED' ? 'cancelled' : ERROR_TABLE[code].outcome

export interface JobsOptions {
  config: Config
  /** The pool's entry file; tests may give one that wraps workers/index.ts (test/fixtures/crashing-worker.ts). */
  workerFile?: string
}

export default fp<JobsOptions>(async (app, { config, workerFile = WORKER_FILE }) => {
  const children = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT)
  const settings = jobSettings(config, app.mediaTools, children)
  const pairing = createPairing(config.poolThreads)
  const pool = config.executionMode === 'pool'
    ? new Piscina<Envelope, JobOutcome>({
      filename: workerFile,
      // One thread stays warm; the others start with the load (tens of ms each) and stop after a minute
      // idle: about 15 MB of RSS per thread that an idle server does not hold.
      minThreads: 1,
      maxThreads: config.poolThreads,
      idleTimeout: 60_000,
      // Small images may share a thread, two at most; pairing.ts decides which.
      concurrentTasksPerWorker: JOBS_PER_THREAD,
      loadBalancer: pairing.balancer,
      workerData: { niceness: config.workerNiceness } satisfies WorkerData
    })
    : undefined
  // Errors not tied to a task (a thread failing to start); a task's own crash rejects that task instead.
  pool?.on('error', err => app.log.error({ err }, 'worker pool error'))
  // Only inline mode runs jobs here: in pool mode the main thread never loads sharp (about 30 MB less RSS).
  const dispatch = pool === undefined ? (await import('../../workers/dispatch.ts')).dispatch : undefined

  /** Each job in flight, with the control word of its current attempt (a crash may give it a second one). */
  const inFlight = new Map<symbol, { control: SharedArrayBuffer, settled: Promise<unknown> }>()
  let completed = 0
  let backgroundSteps = 0
  const { metrics } = app

  /** One attempt at a job: a fresh control word and a seat of its own in the pool. */
  function submit (envelope: Envelope, seat: Seat, job: symbol, background: boolean): Promise<JobOutcome> {
    // Its slab is not refilled while the attempt may read it, whenever the main thread stops waiting.
    const release = holdSource(envelope)
    const { sent, transferList } = pool !== undefined ? handOff(envelope, seat) : { sent: envelope, transferList: [] }
    const pending = pool !== undefined
      // The seat rides along as piscina's queue options: a symbol key, so it is not sent to the thread.
      ? pool.run(Object.assign(sent, { [Piscina.queueOptionsSymbol]: seat }), { transferList })
      : dispatch!(envelope)
    // Every attempt that ran its course teaches admission its cost, failed or timed out as well as ok: jobs
    // that fail slowly must raise the expected wait too. A run cut short by its client leaving would have cost
    // at least what it ran: a lower bound, so that a client that leaves at once cannot talk the estimate down,
    // nor one that starts costly jobs and leaves keep it low. One cancelled at the main thread's deadline cost all of it.
    const settled = pending.then(outcome => {
      const cut = !outcome.ok && outcome.error.code === 'CANCELLED' && outcome.workMs < config.jobTimeoutMs
      // A background step is no request's cost: a video still is a 'thumbnail' too, and would raise the photos' estimate.
      if (outcome.workMs > 0 && !background) app.admission[cut ? 'recordAtLeast' : 'record'](envelope.task.kind, outcome.workMs / seat.sharers)
    }, () => {}).finally(() => {
      pairing.leave(seat)
      release?.()
    })
    inFlight.set(job, { control: envelope.control, settled })
    return pending
  }

  async function run<T extends JobTask> (task: T, { signal, background = false }: RunOptions = {}): Promise<JobResult<JobResults[T['kind']]>> {
    // Refused here too (503) if the queue filled up while this request was uploading. A background step reserves
    // nothing: it must never be why a request is refused (capacity.ts keeps it off a busy pool instead).
    const release = background ? () => {} : app.admission.reserve(task.kind)
    const job = Symbol(task.kind)
    const deadline = Date.now() + config.jobTimeoutMs
    const ffmpegThreads = decoderThreads(config.poolThreads, inFlight.size, background)
    if (background) backgroundSteps++
    const envelope = (): Envelope => ({ task, settings: withDecoderThreads(settings, ffmpegThreads, config.jobTimeoutMs), control: createControl(), deadline })
    const seat = pairing.seatFor(task)
    const submitted = performance.now()
    const pending = submit(envelope(), seat, job, background)
    const current = () => inFlight.get(job)!.control

    // Each outcome is counted once, where it is decided: the main thread's deadline or the client leaving
    // here, the worker's verdict when it answers first, a crash in the catch below.
    const count = (outcome: JobOutcomeLabel) => metrics.jobs.inc({ kind: task.kind, outcome })
    let timer: NodeJS.Timeout | undefined
    let onAbort: (() => void) | undefined
    const stopped = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { cancel(current()); count('timeout'); reject(new errors.Timeout(config.jobTimeoutMs)) }, config.jobTimeoutMs + DEADLINE_SLACK_MS)
      // A remote video's failed range read aborts with its catalogue error, counted as that error is.
      onAbort = () => { cancel(current()); count(signal?.reason instanceof ThumbdError ? outcomeOf(codeOf(signal.reason)) : 'cancelled'); reject(signal?.reason) }
      signal?.addEventListener('abort', onAbort, { once: true })
    })
    try {
      let outcome: JobOutcome
      try {
        outcome = await Promise.race([pending, stopped])
      } catch (err) {
        // Its thread died while it shared it: the other job may have killed it. Run it once more, on a
        // thread of its own, where only a job that crashes by itself fails (and is counted as crashed).
        if (err instanceof ThumbdError || signal?.aborted === true || seat.sharers < 2) throw err
        app.log.warn({ err }, 'a pool thread died under two jobs: running this one again alone')
        outcome = await Promise.race([submit(envelope(), pairing.aloneSeat(), job, background), stopped])
      }
      const queueMs = performance.now() - submitted - outcome.workMs
      metrics.jobWait.observe({ kind: task.kind }, queueMs / 1000)
      metrics.jobRun.observe({ kind: task.kind }, outcome.workMs / 1000)
      if (!outcome.ok) {
        const { error } = outcome
        count(outcomeOf(error.code))
        if (error.code === 'INTERNAL') app.log.error({ detail: error.detail }, 'job failed')
        else if (error.detail !== undefined) app.log.debug({ code: error.code, detail: error.detail }, 'job refused the media')
        throw fromJobFailure(error, config.jobTimeoutMs)
      }
      count('ok')
      return { value: outcome.value as JobResults[T['kind']], queueMs, workMs: outcome.workMs }
    } catch (err) {
      if (signal?.aborted === true) throw signal.reason
      // A worker that died (crash, exit) rejects the task itself: this job fails, piscina replaces the thread.
      if (!(err instanceof ThumbdError)) {
        count('crashed')
        app.log.error({ err }, 'a worker crashed while running a job')
        throw new errors.Internal()
      }
      throw err
    } finally {
      clearTimeout(timer)
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort)
      const settled = inFlight.get(job)!.settled
      // The reservation lasts as long as the work: a job answered at its deadline may still run a moment.
      settled.finally(() => { inFlight.delete(job); completed++; if (background) backgroundSteps--; release() })
    }
  }

  // piscina derives utilization from a full run-time summary, percentiles included: about 0.3 ms a call,
  // too much for every /health probe of a busy server. A figure up to a second old is fresh enough.
  let utilization = { value: 0, at: Number.NEGATIVE_INFINITY }
  function poolUtilization (): number {
    const now = performance.now()
    if (now - utilization.at > UTILIZATION_REFRESH_MS) utilization = { value: pool?.utilization ?? 0, at: now }
    return utilization.value
  }

  function stats (): JobStats {
    return {
      mode: config.executionMode,
      threads: pool?.threads.length ?? 0,
      queued: pool?.queueSize ?? 0,
      running: inFlight.size - (pool?.queueSize ?? 0),
      utilization: poolUtilization(),
      completed,
      ffmpegChildren: Atomics.load(new Int32Array(children), 0),
      background: backgroundSteps
    }
  }

  app.decorate('jobs', { run, stats })
  app.metrics.beforeScrape(() => {
    const now = stats()
    metrics.poolThreads.set(now.threads)
    metrics.poolQueue.set(now.queued)
    metrics.poolRunning.set(now.running)
    metrics.poolUtilization.set(now.utilization)
    metrics.ffmpegChildren.set(now.ffmpegChildren)
  })

  app.addHook('onClose', async () => {
    // Requests have drained by now; whatever still runs is cancelled so its worker kills its ffmpeg
    // (terminating a thread would not), then the threads go.
    for (const { control } of inFlight.values()) cancel(control)
    await Promise.race([Promise.all([...inFlight.values()].map(job => job.settled)), new Promise(resolve => setTimeout(resolve, CANCEL_WAIT_MS).unref())])
    await pool?.destroy()
  })
}, { name: 'jobs', dependencies: ['metrics', 'admission', 'media-tools'] })
