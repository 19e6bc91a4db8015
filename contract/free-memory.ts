// Memory given back at once instead of at a GC: a buffer's bytes that no one will read again, in whichever
// thread holds them (a pool thread's finished source, workers/thread/source-release.ts; a fetched body's chunks once on
// their slab, src/sources/sink.ts). Left to the GC, V8's limits, which grow with external memory, put it off.

/**
 * Frees the memory under `view` now if `view` is the whole of its ArrayBuffer (`transfer(0)` detaches it: any
 * view left reads as empty). A view that shares its buffer with other bytes, a SharedArrayBuffer, an empty or
 * detached one, or one its owner made non-detachable is left as it is.
 */
export function freeWhole (view: Uint8Array): void {
  const { buffer, byteOffset, byteLength } = view
  if (!(buffer instanceof ArrayBuffer) || byteOffset !== 0 || byteLength !== buffer.byteLength || byteLength === 0) return
  try {
    buffer.transfer(0)
  } catch {
    // Non-detachable: left to the GC.
  }
}
