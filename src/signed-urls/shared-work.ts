// Identical GET URLs asked at once (a CDN's miss storm, a page with the same <img> twice) share one fetch and
// one job: the first request starts them, the others join until the fetch is done. Each request then decides
// alone: its If-None-Match may match (304, no job), or it waits for the one job the others wait for too.
// The fetched source goes when the last request that joined is done with it. Hand-written: the sharing
// rule (by signed path, across the fetch and the job) is thumbd's own.
import type { JobResult } from '../plugins/jobs.ts'
import type { SpooledSource } from '../sources/spool.ts'

export interface Fetched {
  source: SpooledSource
  /** From the source's bytes and the normalised options. */
  etag: string
}

interface Shared {
  fetched: Promise<Fetched>
  /** Requests that joined and are not done: counted from the moment they join, so none can see the source go. */
  users: number
  image?: Promise<unknown>
}

export function createSharedWork () {
  const fetching = new Map<string, Shared>()

  /**
   * Runs `use` with the shared fetch of `key` (started by `fetch` if none is under way); its `image` gives the
   * one job's result to whoever asks, started by the first that does.
   */
  async function withShared<T, R = JobResult> (key: string, fetch: () => Promise<Fetched>, job: (fetched: Fetched) => Promise<R>, use: (fetched: Fetched, image: () => Promise<R>) => Promise<T>): Promise<T> {
    let shared = fetching.get(key)
    if (shared === undefined) {
      const started: Shared = { fetched: fetch(), users: 0 }
      // Later requests fetch anew: the source may have changed since.
      started.fetched.then(() => fetching.delete(key), () => fetching.delete(key))
      fetching.set(key, shared = started)
    }
    const joined = shared
    joined.users++
    try {
      const fetched = await joined.fetched
      return await use(fetched, () => (joined.image ??= job(fetched)) as Promise<R>)
    } finally {
      if (--joined.users === 0) {
        joined.fetched.then(({ source }) => (joined.image ?? Promise.resolve()).catch(() => {}).finally(() => source.dispose()), () => {}).catch(() => {})
      }
    }
  }

  return { withShared }
}
