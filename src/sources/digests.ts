// Digests of a source. A source bound for a file is hashed here, on the main thread, chunk by chunk as
// they arrive: a few milliseconds in all, never in one block. A source that passes
// OFFLOAD_BYTES is hashed again from its first byte on the digest thread (workers/digest.ts), and the work
// done here is dropped: receiving a 100 MB body and hashing it then share two cores instead of queueing on
// one (100 MB uploads at 0.77-0.80 of the raw tools' rate, docs/benchmarks.md, "Images and hashes against the
// raw tools"; a bare server hashing on its main thread reached 0.48). Bytes cross in 1 MiB batches, copied
// once (the spool may still need the chunks) and transferred there and back; at most MAX_IN_FLIGHT batches
// wait to be hashed.
// A source kept whole in memory (up to deferBytes) is not hashed here at all: its chunks are only held, and
// at the end its whole bytes move to the digest thread, are hashed there and move back, never copied
// (SHA-256 of a 1 MB photo was 0.65-0.76 ms of the main thread's ~3 ms a request, measured by profile:
// `node load/main-thread.ts PHOTO --route url --cpu-prof DIR`).
import { createHash, type Hash } from 'node:crypto'
import { MessageChannel, type MessagePort } from 'node:worker_threads'
import type { DigestMessage, DigestResult, DigestTask } from '../../contract/digest.ts'

/** Runs a digest task on the digest thread; the task's port is in the transfer list. */
export type RunDigestTask = (task: DigestTask, transferList: MessagePort[]) => Promise<DigestResult>

/**
 * Sources past this size are hashed on the digest thread. Under this size hashing here costs less CPU in
 * all than the batch copies and messages of offloading (SHA-256 runs at ~1.7 GB/s here, in 64 KB steps):
 * with 4 MiB, 12 MB videos and 5 MB photos went to the thread, and over HTTP at 4 connections the video
 * ran at 7.0-7.1/s against 7.3-7.7/s with this, the 15 MP photo 7.3-8.4/s against 8.7-9.0/s. 100 MB
 * hashes still gain from the second core.
 */
export const OFFLOAD_BYTES = 32 << 20
const BATCH_BYTES = 1 << 20
/** Batches sent and not yet hashed, at most. */
const MAX_IN_FLIGHT = 8
/**
 * A source kept whole in memory under this size is hashed here after all: SHA-256 of 128 KiB is ~0.08 ms,
 * about what the round trip to the digest thread (a channel, a task, two messages) costs the main thread.
 */
export const HASH_HERE_BYTES = 128 << 10

export class StreamDigests {
  private readonly algorithms: string[]
  private readonly runTask: RunDigestTask | undefined
  /** The digest thread, for a source hashed whole at the end; undefined in inline mode. */
  private readonly digestThread: RunDigestTask | undefined
  private readonly offloadBytes: number
  /** The chunks hashed here, kept until the source proves large enough for the digest thread. */
  private held: Buffer[] = []
  /** Made with the first byte hashed here: a source hashed whole at the end never needs them. */
  private hashers: Array<readonly [string, Hash]> | undefined
  private heldBytes = 0
  private thread: { port: MessagePort, result: Promise<DigestResult> } | undefined
  /** Made when the source reaches the digest thread: most sources never do, and 1 MiB each would feed the GC. */
  private batch: Uint8Array | undefined
  private filled = 0
  private inFlight = 0
  /** Batches the digest thread has handed back, to be filled again: no new memory per megabyte. */
  private readonly spare: Uint8Array[] = []
  private failure: unknown
  private wake: (() => void) | undefined
  /** Chunks taken but not hashed yet, while the source may still be hashed whole by crypto.subtle. */
  private deferred: Buffer[] | undefined
  private deferredBytes = 0
  private readonly deferBytes: number

  /**
   * Without runTask every byte is hashed here (EXECUTION_MODE=inline). A source announced past offloadBytes
   * goes to the digest thread from its first byte: hashing its first bytes here too would be thrown away.
   */
  constructor (algorithms: readonly string[], runTask?: RunDigestTask, declaredBytes?: number, offloadBytes = OFFLOAD_BYTES, deferBytes = 0) {
    this.algorithms = [...algorithms]
    this.offloadBytes = offloadBytes
    this.deferBytes = deferBytes
    this.digestThread = runTask
    // A body announced at or under the threshold cannot pass it (HTTP frames it by its Content-Length):
    // its chunks need not be held for a digest thread it will never reach.
    this.runTask = declaredBytes !== undefined && declaredBytes <= offloadBytes ? undefined : runTask
    if (this.runTask !== undefined && declaredBytes !== undefined) this.thread = this.start(this.runTask)
    const announcedSmall = declaredBytes === undefined || declaredBytes <= deferBytes
    if (this.thread === undefined && announcedSmall && deferBytes > 0) this.deferred = []
  }

  /** Takes the next chunk; the promise, when there is one, resolves once there is room for more. */
  update (chunk: Buffer): Promise<void> | undefined {
    if (this.deferred === undefined) return this.take(chunk)
    if (this.deferredBytes + chunk.length <= this.deferBytes) {
      this.deferred.push(chunk)
      this.deferredBytes += chunk.length
      return
    }
    return this.stopDeferring().then(() => this.take(chunk))
  }

  /** The source will not be hashed whole at the end (it went to a file, or past deferBytes): hash what was held, as it came. */
  async stopDeferring (): Promise<void> {
    const held = this.deferred
    if (held === undefined) return
    this.deferred = undefined
    this.deferredBytes = 0
    for (const chunk of held) await this.take(chunk)
  }

  private take (chunk: Buffer): Promise<void> | undefined {
    if (this.thread === undefined) {
      for (const [, hash] of this.here()) hash.update(chunk)
      if (this.runTask === undefined) return
      this.held.push(chunk)
      this.heldBytes += chunk.length
      if (this.heldBytes <= this.offloadBytes) return
      this.thread = this.start(this.runTask)
      const held = this.held
      this.held = []
      for (const c of held) this.copy(c)
    } else {
      this.copy(chunk)
    }
    return this.room()
  }

  /**
   * Hex digests by algorithm of every byte given, and those bytes: `whole` holds exactly them in one piece,
   * owning its ArrayBuffer (the spool's in-memory source). A source still deferred moves to the digest
   * thread, is hashed there, and moves back: no copy, and the main thread hashes nothing. Use the bytes
   * returned: `whole` is detached if it moved.
   */
  async finishWhole (whole: Uint8Array): Promise<{ digests: Record<string, string>, bytes: Uint8Array }> {
    if (this.deferred === undefined || this.digestThread === undefined || whole.byteLength < HASH_HERE_BYTES) return { digests: await this.finish(), bytes: whole }
    this.deferred = undefined
    const { port1, port2 } = new MessageChannel()
    try {
      const back = new Promise<ArrayBuffer>(resolve => port1.once('message', resolve))
      const result = this.digestThread({ port: port2, algorithms: this.algorithms }, [port2])
      port1.postMessage(whole, [whole.buffer as ArrayBuffer])
      port1.postMessage('end' satisfies DigestMessage)
      const digests = await result
      if (digests === null) throw new Error('the digest thread stopped before the end of the source')
      return { digests, bytes: new Uint8Array(await back) }
    } finally {
      port1.close()
    }
  }

  /** Hex digests by algorithm of every byte given. */
  async finish (): Promise<Record<string, string>> {
    // No whole bytes to hand over: what was held is hashed here after all.
    if (this.deferred !== undefined) await this.stopDeferring()
    if (this.thread === undefined) {
      this.held = []
      return Object.fromEntries(this.here().map(([algorithm, hash]) => [algorithm, hash.digest('hex')]))
    }
    this.send()
    this.post('end')
    const digests = await this.thread.result
    this.thread.port.close()
    if (digests === null) throw new Error('the digest thread stopped before the end of the source')
    return digests
  }

  /** The source failed: the digest task ends without a result. Safe to call more than once. */
  abort (): void {
    this.held = []
    this.deferred = undefined
    this.thread?.port.close()
  }

  private here (): Array<readonly [string, Hash]> {
    this.hashers ??= this.algorithms.map(algorithm => [algorithm, createHash(algorithm)] as const)
    return this.hashers
  }

  private start (runTask: RunDigestTask): NonNullable<StreamDigests['thread']> {
    const { port1, port2 } = new MessageChannel()
    port1.on('message', (done: ArrayBuffer) => {
      this.inFlight -= 1
      this.spare.push(new Uint8Array(done))
      if (this.inFlight < MAX_IN_FLIGHT) this.wake?.()
    })
    const result = runTask({ port: port2, algorithms: this.algorithms }, [port2])
    // A crashed digest thread must not leave update() waiting for acknowledgements that never come.
    result.catch((err: unknown) => {
      this.failure = err
      this.wake?.()
    })
    return { port: port1, result }
  }

  private copy (chunk: Uint8Array): void {
    let at = 0
    while (at < chunk.length) {
      this.batch ??= this.spare.pop() ?? newBatch()
      const n = Math.min(chunk.length - at, BATCH_BYTES - this.filled)
      this.batch.set(chunk.subarray(at, at + n), this.filled)
      this.filled += n
      at += n
      if (this.filled === BATCH_BYTES) this.send()
    }
  }

  private send (): void {
    if (this.batch === undefined || this.filled === 0) return
    this.post(this.batch.subarray(0, this.filled))
    this.inFlight += 1
    this.batch = undefined
    this.filled = 0
  }

  private post (message: DigestMessage): void {
    // The batch's memory moves to the digest thread: no second copy.
    this.thread!.port.postMessage(message, message === 'end' ? [] : [message.buffer as ArrayBuffer])
  }

  private room (): Promise<void> | undefined {
    if (this.failure !== undefined) return Promise.reject(this.failure)
    if (this.inFlight < MAX_IN_FLIGHT) return
    return new Promise((resolve, reject) => {
      this.wake = () => {
        this.wake = undefined
        if (this.failure !== undefined) reject(this.failure)
        else resolve()
      }
    })
  }
}

/** A batch owns its whole ArrayBuffer (it is transferred), and is not zero-filled (it is written before it is sent). */
const newBatch = (): Uint8Array => Buffer.allocUnsafeSlow(BATCH_BYTES)
