// Reused shared memory for photos gathered whole in memory on their way to a pool thread. A fresh buffer per
// photo cost the main thread the first touch of each of its pages, and handing it to a pool thread cost another
// fresh buffer and a copy (together ~0.9 ms of a 4 MP URL photo's ~4 ms on a loaded VM: the gather's first touch
// 0.53-0.59 ms, the hand-off's 0.27-0.32 ms, by `node load/main-thread.ts PHOTO --route url --cpu-prof DIR`). A slab is a
// SharedArrayBuffer: the pool thread reads the bytes where they are (no copy, no transfer), they stay here
// should the job run again after a crash (plugins/jobs.ts), and the slab is filled by a later photo once
// nothing uses it any more: neither its source (released when its request is done) nor any job attempt still
// running on it (held from the hand-off until the thread's answer or death). Only for bytes that nothing but
// the job reads after the request: a reply that sends the source itself must not see it refilled mid-write.
// Hand-written: a free list per size class is the whole of it.

/** Slabs are powers of two from this size: only the pages a photo writes are ever resident. */
const MIN_SLAB_BYTES = 64 << 10
/** Free slabs kept at most, in bytes; past it a slab released is left to the GC. */
const MAX_FREE_BYTES = 32 << 20
/** A free slab unused this long goes: an idle server gives the memory back. */
const IDLE_MS = 30_000

/** Ends one use of a slab; calling it again does nothing. */
export type Release = () => void

export class SlabPool {
  private readonly free = new Map<number, Array<{ buffer: SharedArrayBuffer, since: number }>>()
  /** Uses of each slab in use: its source, and each job attempt that reads it. */
  private readonly users = new WeakMap<SharedArrayBuffer, number>()
  private freeBytes = 0
  private used = 0
  private timer: NodeJS.Timeout | undefined

  /** `size` bytes on a free slab (or a new one), used once by the caller: its release hands the slab back. */
  take (size: number): { bytes: Uint8Array, release: Release } {
    const capacity = slabBytes(size)
    let buffer = this.free.get(capacity)?.pop()?.buffer
    if (buffer === undefined) buffer = new SharedArrayBuffer(capacity)
    else this.freeBytes -= capacity
    this.users.set(buffer, 1)
    this.used++
    return { bytes: new Uint8Array(buffer, 0, size), release: this.releaser(buffer) }
  }

  /** One more use of the slab under `bytes`, if they are on one: what releases it. */
  hold (bytes: Uint8Array): Release | undefined {
    const buffer = bytes.buffer
    if (!(buffer instanceof SharedArrayBuffer)) return undefined
    const uses = this.users.get(buffer)
    // A slab given back may be refilled by the next photo under a decode: a bug to stop, never to read.
    if (uses === undefined) throw new Error('a job was handed a slab that was already given back')
    this.users.set(buffer, uses + 1)
    return this.releaser(buffer)
  }

  /** Slabs some source or job uses now. */
  get slabsInUse (): number {
    return this.used
  }

  /** Bytes on free slabs now. */
  get freeSlabBytes (): number {
    return this.freeBytes
  }

  private releaser (buffer: SharedArrayBuffer): Release {
    let done = false
    return () => {
      if (done) return
      done = true
      const uses = this.users.get(buffer)! - 1
      if (uses > 0) {
        this.users.set(buffer, uses)
        return
      }
      this.users.delete(buffer)
      this.used--
      if (this.freeBytes + buffer.byteLength > MAX_FREE_BYTES) return
      const list = this.free.get(buffer.byteLength) ?? []
      this.free.set(buffer.byteLength, list)
      list.push({ buffer, since: Date.now() })
      this.freeBytes += buffer.byteLength
      this.timer ??= setInterval(() => this.trim(), IDLE_MS).unref()
    }
  }

  private trim (): void {
    const before = Date.now() - IDLE_MS
    for (const [capacity, list] of this.free) {
      // Most recently freed last: the idle ones lead.
      const idle = list.findIndex(slab => slab.since > before)
      const gone = idle < 0 ? list.length : idle
      list.splice(0, gone)
      this.freeBytes -= gone * capacity
      if (list.length === 0) this.free.delete(capacity)
    }
    if (this.free.size === 0) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }
}

const slabBytes = (size: number): number => Math.max(MIN_SLAB_BYTES, 2 ** Math.ceil(Math.log2(Math.max(size, 1))))

/** The process's slabs: the spool takes them, the hand-off to the pool holds them. */
export const slabs = new SlabPool()
