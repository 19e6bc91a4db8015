// A pool thread frees a job's source bytes the moment the job has succeeded, instead of at its next GC.
// Under load that GC came late: V8's limits grow with external memory (src/v8-flags.ts), and each pool
// thread held 30-86 MB of finished photos' sources (a 15 MP photo is 5 MB), all in malloc's one arena
// beside the decoders' buffers. Mixed load (node load/mixed-memory.ts, 6 alternating pairs, 4 of them on a
// loaded VM): 579-686 -> 441-515 MB, CPU per photo unchanged (docs/architecture.md, "Why it is fast"; today's
// figure in docs/benchmarks.md, "Memory").
import { freeWhole } from '../../contract/free-memory.ts'
import type { JobTask } from '../../contract/types.ts'

/**
 * Detaches the source's bytes (ArrayBuffer.prototype.transfer(0) frees them at once). Only after a job that
 * succeeded: a failed or cancelled one may have left a decode on libuv's threads still reading them. Only
 * bytes that are their buffer's whole: a view may share its buffer with something else.
 */
export function releaseSource ({ source: { ref } }: JobTask): void {
  if (ref.location === 'memory') freeWhole(ref.bytes)
}
