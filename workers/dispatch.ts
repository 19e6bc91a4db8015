// Runs one job by name and turns any failure into plain { code, message } data.
// Both the piscina entry (index.ts) and inline mode call this, so the two modes run identical code.
import { performance } from 'node:perf_hooks'
import { begin } from './control.ts'
import { toFailure } from './job-error.ts'
import { thumbnail } from './thumbnail.ts'
import type { Envelope, JobOutcome } from './types.ts'

const jobs = { thumbnail }

export async function dispatch ({ task, settings, control, deadline }: Envelope): Promise<JobOutcome> {
  const started = performance.now()
  const running = begin(control, deadline)
  if (running === undefined) return { ok: false, error: { code: 'CANCELLED', message: 'the job was cancelled' }, workMs: 0 }
  try {
    const value = await jobs[task.kind](task, { settings, signal: running.signal, deadline })
    return { ok: true, value, workMs: performance.now() - started }
  } catch (err) {
    // A job that lost the race with its cancel/deadline reports that, not the decoder's complaint about being killed.
    const reason = running.signal.aborted ? running.signal.reason : err
    return { ok: false, error: toFailure(reason), workMs: performance.now() - started }
  } finally {
    running.finish()
  }
}
