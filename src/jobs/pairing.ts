// Which jobs may share a pool thread: piscina's load balancer for the jobs pool.
// One small-image pipeline leaves its thread's core idle part of the time (the JPEG decode is
// single-threaded, libvips hands work between its own threads), so two of them run on one thread: measured
// on 2 cores with a 3 MP photo over HTTP at 4 connections, 0.83 -> 0.87 of bare sharp at its best.
// Everything else keeps a thread to itself: two 15 MP pipelines on one thread were slower and held ~100 MB
// more each, and a job waiting behind a video frame would wait for seconds. Hand-written: the policy is
// thumbd's own (see admission.ts).
import { Piscina } from 'piscina'
import type { JobTask } from '../../contract/types.ts'

/** Sources up to this size count as small images: a 3 MP JPEG is ~1 MB, a 15 MP one ~5 MB. */
export const SMALL_IMAGE_BYTES = 2 * 2 ** 20
/** At most this many jobs on one thread: piscina's concurrentTasksPerWorker. */
export const JOBS_PER_THREAD = 2

type Balancer = NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>['loadBalancer']>

/** One job's place in the pool; travels with its task as piscina's queue options. */
export interface Seat {
  readonly small: boolean
  thread?: number
  /** The most jobs its thread ran at once while it ran: its run time is shared that many ways. */
  sharers: number
}

export const isSmallImage = (task: JobTask) => task.source.media.kind === 'image' && task.source.size <= SMALL_IMAGE_BYTES

export function createPairing (maxThreads: number) {
  const seated = new Map<number, Set<Seat>>()

  const balancer: Balancer = (task, workers) => {
    const seat = (task as unknown as Record<symbol, Seat | undefined>)[Piscina.queueOptionsSymbol]
    let idle
    let partner
    for (const worker of workers) {
      if (worker.terminating || worker.destroyed) continue
      if (worker.currentUsage === 0) { idle = worker; break }
      if (seat?.small === true && partner === undefined && worker.currentUsage < JOBS_PER_THREAD && onlySmall(worker.id)) partner = worker
    }
    // A thread that can still be started is better than a shared one: returning null makes piscina start it.
    const chosen = idle ?? (workers.length < maxThreads ? undefined : partner)
    if (chosen !== undefined && seat !== undefined) sit(seat, chosen.id)
    return chosen ?? null
  }

  function onlySmall (thread: number) {
    for (const seat of seated.get(thread) ?? []) if (!seat.small) return false
    return true
  }

  function sit (seat: Seat, thread: number) {
    const seats = seated.get(thread) ?? new Set<Seat>()
    seated.set(thread, seats.add(seat))
    seat.thread = thread
    for (const other of seats) other.sharers = Math.max(other.sharers, seats.size)
  }

  /** The job is over (done, failed or its thread gone). */
  function leave (seat: Seat) {
    if (seat.thread === undefined) return
    const seats = seated.get(seat.thread)
    seats?.delete(seat)
    if (seats?.size === 0) seated.delete(seat.thread)
  }

  const seatFor = (task: JobTask): Seat => ({ small: isSmallImage(task), sharers: 1 })
  /** A seat that shares its thread with nobody (a job run again after a crash; see plugins/jobs.ts). */
  const aloneSeat = (): Seat => ({ small: false, sharers: 1 })

  return { balancer, seatFor, aloneSeat, leave }
}
