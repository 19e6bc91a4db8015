// The system libraries called through koffi (pool threads: libturbojpeg, Little CMS, libwebp; the main thread:
// libc's memcpy): each bound once per thread on first use. A host without the library, or without koffi's
// prebuilt binary, gets undefined, and the work is done without it (by sharp, by V8).
import { createRequire } from 'node:module'

/** koffi, required lazily (a CommonJS addon): a host without its binary still works. */
export const koffi = () => createRequire(import.meta.url)('koffi') as typeof import('koffi')

/** `bind` run on the first call in this thread, its result kept; undefined for good if it threw. */
export function boundOnce<T> (bind: () => T): () => T | undefined {
  let bound: T | null | undefined
  return () => {
    if (bound === undefined) {
      try {
        bound = bind()
      } catch {
        bound = null
      }
    }
    return bound ?? undefined
  }
}

/** A copy, as a Buffer, of the `bytes` bytes a native call wrote at `pointer` (which stays the caller's to free). */
export function copyOut (pointer: unknown, bytes: number): Buffer {
  const copy = koffi().decode(pointer, 'uint8_t', bytes) as Uint8Array
  return Buffer.from(copy.buffer, copy.byteOffset, copy.byteLength)
}
