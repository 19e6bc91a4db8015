// The system libraries a pool thread calls through koffi (libturbojpeg, Little CMS): each bound once per
// thread on first use. A host without the library, or without koffi's prebuilt binary, gets undefined, and
// images go through sharp instead.
import { createRequire } from 'node:module'

/** koffi, required lazily (a CommonJS addon): a host without its binary still serves images. */
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
