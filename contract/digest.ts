// What the main thread and the digest thread (workers/digest.ts) say to each other, and the digest a source's
// identity is, wherever it is computed (the spool, the digest thread, a pool thread's job).
import { createHash } from 'node:crypto'
import type { MessagePort } from 'node:worker_threads'

export interface DigestTask {
  port: MessagePort
  algorithms: string[]
}

/** Main thread -> digest thread: the next bytes, or the end of the source. Back: each batch's buffer, once hashed. */
export type DigestMessage = Uint8Array | 'end'

/** Hex digests by algorithm; null when the sender closed the port before the end (the upload failed). */
export type DigestResult = Record<string, string> | null

/** The hex SHA-256 of a source's bytes: its identity, which ETags derive from. */
export const sourceSha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')
