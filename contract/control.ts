// Cancelling a job that may sit in the pool's queue or run in a worker.
// piscina's own abort terminates a running worker thread, and a terminated thread cannot kill the ffmpeg
// it spawned. So the main thread flips a shared word instead; the worker watches it and cleans up itself.
import { JobError } from './job-error.ts'

const QUEUED = 0
const RUNNING = 1
const CANCELLED = 2
const DONE = 3

export function createControl (): SharedArrayBuffer {
  return new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT)
}

/** Main thread: ask the job to stop. False if it had already finished. */
export function cancel (control: SharedArrayBuffer): boolean {
  const word = new Int32Array(control)
  for (;;) {
    const state = Atomics.load(word, 0)
    if (state === DONE || state === CANCELLED) return false
    if (Atomics.compareExchange(word, 0, state, CANCELLED) === state) {
      Atomics.notify(word, 0)
      return true
    }
  }
}

export interface RunningJob {
  /** Aborts with a JobError: CANCELLED when the main thread cancels, TIMEOUT at the deadline. */
  signal: AbortSignal
  finish (): void
}

/** Worker side: claim the job, or get undefined if it was cancelled while queued. */
export function begin (control: SharedArrayBuffer, deadline: number): RunningJob | undefined {
  const word = new Int32Array(control)
  if (Atomics.compareExchange(word, 0, QUEUED, RUNNING) !== QUEUED) return undefined
  const controller = new AbortController()
  const waiting = Atomics.waitAsync(word, 0, RUNNING)
  if (waiting.async) {
    waiting.value.then(() => {
      if (Atomics.load(word, 0) === CANCELLED) controller.abort(new JobError('CANCELLED', 'the job was cancelled'))
    }, () => {})
  }
  const timer = setTimeout(() => controller.abort(new JobError('TIMEOUT', 'the job ran past its deadline')), Math.max(0, deadline - Date.now()))
  return {
    signal: controller.signal,
    finish () {
      clearTimeout(timer)
      if (Atomics.compareExchange(word, 0, RUNNING, DONE) === RUNNING) Atomics.notify(word, 0)
    }
  }
}
