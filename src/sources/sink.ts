// Where a source's bytes gather while they stream in (src/sources/spool.ts drives it): in memory, moved to a
// temp file once past the memory threshold, or only counted once refused; at the end, one buffer (fresh, or a
// reused slab for a source its job hashes) or the closed file.
import { open, type FileHandle } from 'node:fs/promises'
import { freeWhole } from '../../contract/free-memory.ts'
import { SNIFF_BYTES } from '../../contract/sniff.ts'
import { copyChunks } from './slab-copy.ts'
import { slabs, type Release } from './slabs.ts'
import type { SpooledSource, SpoolLimits } from './spool.ts'

/** Disk writes are batched to about this size. */
const WRITE_BATCH_BYTES = 1 << 20

type SinkLimits = Pick<SpoolLimits, 'memoryBytes' | 'tempDir' | 'ownsChunks'>

/** Collects chunks in memory and moves them to a temp file once they pass the memory threshold. */
export class Sink {
  size = 0
  /** The first SNIFF_BYTES bytes, kept apart so sniffing works whatever has been written out. */
  private first = Buffer.alloc(0)
  /** In memory mode every chunk; in file mode the chunks not yet written. */
  private chunks: Buffer[] = []
  private unwritten = 0
  private file: { path: string, handle: FileHandle } | undefined
  private readonly limits: SinkLimits
  private disposed = false
  private discarding = false
  /** Gives back the slab the bytes were gathered on, if they were. */
  private releaseSlab: Release | undefined
  /**
   * The slab the bytes are copied onto as they come (fillSlab), and the last chunk copied, freed (ownsChunks)
   * only when the next one comes or at the end: 'data' is emitted inside undici's parser, which still reads the
   * buffer under the chunk it has just pushed.
   */
  private filling: { slab: Uint8Array, last?: Buffer } | undefined

  constructor (limits: SinkLimits) {
    this.limits = limits
  }

  head (): Uint8Array {
    return this.first
  }

  /** Still collecting the whole source in memory (not in a temp file, not discarding). */
  get inMemory (): boolean {
    return this.file === undefined && !this.discarding
  }

  async add (chunk: Buffer): Promise<void> {
    if (this.filling !== undefined) return this.fill(chunk)
    if (this.first.length < SNIFF_BYTES) this.first = Buffer.concat([this.first, chunk.subarray(0, SNIFF_BYTES - this.first.length)])
    this.size += chunk.length
    if (this.discarding) return
    this.chunks.push(chunk)
    this.unwritten += chunk.length
    if (this.file === undefined && this.size > this.limits.memoryBytes) await this.toFile()
    else if (this.file !== undefined && this.unwritten >= WRITE_BATCH_BYTES) await this.flush()
  }

  /**
   * From now on each chunk goes onto a slab of `capacity` bytes as it comes (fill), and with ownsChunks its
   * memory is given back at once: the copy reads memory still in cache, and a body's chunks never pile up for a
   * GC (measured: the GC's share of a URL photo's main thread 0.18 -> 0.13-0.14 ms, `node load/main-thread.ts
   * PHOTO --stand-in --route url --cpu-prof DIR`). For bytes, already sniffed, that finish(true) will return,
   * of a size announced.
   * False, and nothing changes, where the bytes cannot go on it (in a file, past it, not yet sniffed).
   */
  fillSlab (capacity: number): boolean {
    if (!this.inMemory || this.filling !== undefined || this.size > capacity || this.size < SNIFF_BYTES) return false
    const { bytes, release } = slabs.take(capacity)
    this.releaseSlab = release
    this.filling = { slab: bytes }
    const held = this.chunks
    this.chunks = []
    copyChunks(bytes, held)
    if (this.limits.ownsChunks === true) held.forEach(freeWhole)
    return true
  }

  /** The next chunk onto the slab, at once (the caller has checked that it fits). */
  fill (chunk: Buffer): void {
    const filling = this.filling!
    copyChunks(filling.slab.subarray(this.size), [chunk])
    this.size += chunk.length
    if (this.limits.ownsChunks !== true) return
    // A body's head shares its buffer with the headers: freeWhole leaves it to the GC.
    if (filling.last !== undefined) freeWhole(filling.last)
    filling.last = chunk
  }

  /** Back to holding chunks: the bytes so far leave the slab as one chunk of their own. */
  private stopFilling (): void {
    if (this.filling === undefined) return
    this.chunks = [Buffer.from(this.filling.slab.subarray(0, this.size))]
    this.filling = undefined
    this.releaseSlab?.()
    this.releaseSlab = undefined
  }

  async toFile (): Promise<void> {
    if (this.file !== undefined) return
    this.stopFilling()
    const path = this.limits.tempDir.newFile()
    // 'wx': never follow or reuse an existing path.
    this.file = { path, handle: await open(path, 'wx', 0o600) }
    await this.flush()
  }

  private async flush (): Promise<void> {
    if (this.file === undefined || this.chunks.length === 0) return
    await this.file.handle.writev(this.chunks)
    this.chunks = []
    this.unwritten = 0
  }

  /** From now on only count: drop what is held, and the temp file if one was begun. */
  async discard (): Promise<void> {
    this.discarding = true
    this.stopFilling()
    this.chunks = []
    await this.removeFile()
    this.file = undefined
  }

  /**
   * `onSlab`: bytes kept in memory go on a reused slab (slabs.ts), given back when the source is disposed; with
   * ownsChunks their chunks' memory then goes at once.
   */
  async finish (onSlab: boolean): Promise<SpooledSource['ref']> {
    if (this.discarding) return { location: 'discarded' }
    if (this.file !== undefined) {
      await this.flush()
      await this.file.handle.close()
      return { location: 'file', path: this.file.path }
    }
    if (this.filling !== undefined && onSlab) {
      // The body has ended: its parser is done with the last chunk too.
      if (this.filling.last !== undefined) freeWhole(this.filling.last)
      this.filling.last = undefined
      return { location: 'memory', bytes: this.filling.slab.subarray(0, this.size) }
    }
    this.stopFilling()
    // Else a buffer that owns its whole ArrayBuffer, so it can move to a thread without a copy (Buffer.concat
    // may hand out a slice of Node's shared pool, which must never be transferred); not zero-filled: every byte
    // is written just below.
    let bytes: Uint8Array
    if (onSlab) ({ bytes, release: this.releaseSlab } = slabs.take(this.size))
    else bytes = new Uint8Array(Buffer.allocUnsafeSlow(this.size).buffer, 0, this.size)
    copyChunks(bytes, this.chunks)
    // A body's head shares its buffer with the headers: freeWhole leaves it to the GC.
    if (onSlab && this.limits.ownsChunks === true) this.chunks.forEach(freeWhole)
    this.chunks = []
    return { location: 'memory', bytes }
  }

  async dispose (): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    this.chunks = []
    this.releaseSlab?.()
    await this.removeFile()
  }

  private async removeFile (): Promise<void> {
    if (this.file === undefined) return
    await this.file.handle.close().catch(() => {})
    await this.limits.tempDir.remove(this.file.path)
  }
}
