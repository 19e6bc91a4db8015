// What the main thread and the digest thread (workers/digest.ts) say to each other.
import type { MessagePort } from 'node:worker_threads'

/**
 * A source streamed to the digest thread batch by batch over its port, or one already whole in memory,
 * shared with the thread (its bytes on a SharedArrayBuffer: nothing is copied).
 */
export type DigestTask = { port: MessagePort, algorithms: string[] } | { whole: Uint8Array, algorithms: string[] }

/** Main thread -> digest thread: the next bytes, or the end of the source. Back: each batch's buffer, once hashed. */
export type DigestMessage = Uint8Array | 'end'

/** Hex digests by algorithm; null when the sender closed the port before the end (the upload failed). */
export type DigestResult = Record<string, string> | null
