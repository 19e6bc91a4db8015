// The hand-off of a job to its pool thread (src/plugins/jobs.ts submits it): what is sent, and which of its
// buffers move without a copy.
import { slabs, type Release } from '../sources/slabs.ts'
import type { Envelope, JobTask } from '../../contract/types.ts'
import type { Seat } from './pairing.ts'

/**
 * What goes to the pool, and what moves there without a copy. Bytes on a slab (src/sources/slabs.ts) are
 * shared: the thread reads them where they are, and they stay here. Other bytes in memory move; but a small
 * image may share its thread and be run again should that thread die (run() in src/plugins/jobs.ts), and its
 * source may still be read here after the job: a copy of its bytes moves, and the original stays. A plain copy
 * into fresh memory costs the main thread a quarter of postMessage's serialised one (0.14 against 0.56 ms for
 * a 1.1 MB photo).
 */
export function handOff (envelope: Envelope, seat: Seat): { sent: Envelope, transferList: ArrayBuffer[] } {
  const { source } = envelope.task
  if (source.ref.location !== 'memory' || source.ref.bytes.buffer instanceof SharedArrayBuffer) return { sent: envelope, transferList: [] }
  if (!seat.small) return { sent: envelope, transferList: [source.ref.bytes.buffer as ArrayBuffer] }
  const { bytes } = source.ref
  const copy = new Uint8Array(Buffer.allocUnsafeSlow(bytes.byteLength).buffer, 0, bytes.byteLength)
  copy.set(bytes)
  const task = { ...envelope.task, source: { ...source, ref: { ...source.ref, bytes: copy } } } as JobTask
  return { sent: { ...envelope, task }, transferList: [copy.buffer as ArrayBuffer] }
}

/** A job attempt holds the slab its source is on until its thread answers or dies (inline: until it ends). */
export function holdSource ({ task: { source } }: Envelope): Release | undefined {
  return source.ref.location === 'memory' ? slabs.hold(source.ref.bytes) : undefined
}
