// piscina entry point. The result's bytes are moved to the main thread, not cloned.
// First: this thread, its libvips threads and its ffmpeg children yield to the main thread, so /health and
// intake stay quick when every core is busy.
import './thread/niceness.ts'
import { move, transferableSymbol, valueSymbol } from 'piscina'
import { dispatch } from './dispatch.ts'
import { releaseSource } from './thread/source-release.ts'
import type { Envelope, JobOutcome } from '../contract/types.ts'

export default async function run (envelope: Envelope) {
  const outcome = await dispatch(envelope)
  const reply = movable(outcome)
  // After the reply's bytes were copied out: none of them can be the source's.
  if (outcome.ok) releaseSource(envelope.task)
  return reply
}

export function movable (outcome: JobOutcome) {
  if (!outcome.ok || !('data' in outcome.value)) return outcome
  // sharp returns externally-allocated buffers that V8 cannot transfer: one copy into a plain
  // ArrayBuffer, then a zero-copy move (a clone would copy as well, after serialising).
  const data = new Uint8Array(outcome.value.data)
  return move(new MovedOutcome({ ...outcome, value: { ...outcome.value, data } }, data.buffer))
}

class MovedOutcome {
  readonly #outcome: JobOutcome
  readonly #buffer: ArrayBuffer

  constructor (outcome: JobOutcome, buffer: ArrayBuffer) {
    this.#outcome = outcome
    this.#buffer = buffer
  }

  get [transferableSymbol] () { return [this.#buffer] }
  get [valueSymbol] () { return this.#outcome }
}
