// Identical GET URLs asked at once (a CDN's miss storm, a page with the same <img> twice) share one fetch and
// one job: the first request starts them, the others join until the last request using them is done. Each request then decides
// alone: its If-None-Match may match (304, no job), or it waits for the one job the others wait for too.
// The fetched source goes when the last request that joined is done with it; the fetch and the job stop when
// the last request still waiting for them is gone. Hand-written: the sharing rule (by signed path, across
// the fetch and the job) is thumbd's own.
import type { JobResult } from '../plugins/jobs.ts'
import type { SpooledSource } from '../sources/spool.ts'

export interface Fetched {
  source: SpooledSource
  /**
   * From the source's bytes and the normalised options; undefined when the source is hashed by its job
   * (SpoolLimits.hashInJob): each request then takes the ETag from the one job's result.
   */
  etag: string | undefined
}

interface Shared {
  fetched: Promise<Fetched>
  /** Requests that joined and are not done: counted from the moment they join, so none can see the source go. */
  users: number
  /** Requests that joined, are not done and whose client is still there: at 0, `stop` aborts the fetch and the job. */
  waiting: number
  stop: AbortController
  image?: Promise<unknown>
  /** The job has ended: nothing is left for `stop` to stop (before it begins, the fetch or the job may still be). */
  settled: boolean
}

export function createSharedWork () {
  const fetching = new Map<string, Shared>()
  /** Later requests fetch anew: the source may have changed since, or the work been stopped. */
  const forget = (key: string, shared: Shared) => { if (fetching.get(key) === shared) fetching.delete(key) }

  /**
   * Runs `use` with the shared fetch of `key` (started by `fetch` if none is under way); its `image` gives the
   * one job's result to whoever asks, started by the first that does. `fetch` and `job` get the signal that
   * stops the shared work. A request whose client leaves (`gone`) stops waiting at once; the work stops too
   * if no other request is waiting for it. Either way the request fails with an error saying which.
   */
  async function withShared<T, R = JobResult, F extends Fetched = Fetched> (key: string, gone: AbortSignal, fetch: (signal: AbortSignal) => Promise<F>, job: (fetched: F, signal: AbortSignal) => Promise<R>, use: (fetched: F, image: () => Promise<R>) => Promise<T>): Promise<T> {
    let shared = fetching.get(key)
    if (shared === undefined) {
      const stop = new AbortController()
      const started: Shared = { fetched: fetch(stop.signal), users: 0, waiting: 0, stop, settled: false }
      // A failed fetch is forgotten at once; a good one while any request still uses it (see finally), so that
      // requests arriving during its job join it rather than fetch again.
      started.fetched.then(() => {}, () => forget(key, started))
      fetching.set(key, shared = started)
    }
    const joined = shared
    joined.users++
    joined.waiting++
    /** Stops the shared work when no request waits for it any more; whether it did. */
    const stopIfAlone = (): boolean => {
      if (--joined.waiting > 0) return false
      // The usual end, the work done, sends no abort: an Error and an abort event per request were ~0.03 ms of
      // the main thread's ~1 ms (measured by profile: `node load/main-thread.ts PHOTO --stand-in --route get
      // --cpu-prof DIR`).
      if (!joined.settled) joined.stop.abort(new Error('no client is left waiting: the shared fetch and job were cancelled'))
      forget(key, joined)
      return true
    }
    let leave!: (reason: Error) => void
    const left = new Promise<never>((_resolve, reject) => { leave = reject })
    left.catch(() => {})
    const onGone = () => leave(stopIfAlone()
      ? (joined.stop.signal.reason as Error | undefined) ?? new Error('the client left')
      : new Error(`the shared fetch and job go on for ${joined.waiting} other request(s)`))
    if (gone.aborted) onGone()
    else gone.addEventListener('abort', onGone, { once: true })
    try {
      // The same key always comes with the same fetch (the path as signed): its F.
      const fetched = await Promise.race([joined.fetched as Promise<F>, left])
      return await use(fetched, () => Promise.race([(joined.image ??= settling(joined, job(fetched, joined.stop.signal))) as Promise<R>, left]))
    } finally {
      if (!gone.aborted) {
        gone.removeEventListener('abort', onGone)
        // Done (its reply sent, or refused): work that no one else waits for (a job begun for others who left) stops.
        stopIfAlone()
      }
      if (--joined.users === 0) {
        forget(key, joined)
        joined.fetched.then(({ source }) => (joined.image ?? Promise.resolve()).catch(() => {}).finally(() => source.dispose()), () => {}).catch(() => {})
      }
    }
  }

  return { withShared }
}

/** `job`, marking `shared` settled once it ends either way. */
function settling<R> (shared: Shared, job: Promise<R>): Promise<R> {
  job.then(() => { shared.settled = true }, () => { shared.settled = true })
  return job
}
