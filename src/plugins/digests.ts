// The digest thread (workers/digest.ts) that hashes large sources while they stream in, and sources kept
// in memory once whole; see sources/digests.ts. A piscina pool of its own, not a task in the job pool: a digest task lives as long as
// its upload, which a slow client can stretch to minutes, and must never hold a job thread that long. Its
// tasks mostly wait on their ports, so one thread serves them all. It starts with the first source it is
// given and stops when idle, so an idle server does not pay for it. It is not niced like job work: hashing is
// part of intake, and an upload moves no faster than it is hashed.
import fp from 'fastify-plugin'
import { Piscina } from 'piscina'
import type { Config } from '../config.ts'
import type { RunDigestTask } from '../sources/digests.ts'
import type { DigestResult, DigestTask } from '../../contract/digest.ts'
import type { WorkerData } from '../../contract/types.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Hashes a source on the digest thread; undefined in inline mode, where everything runs on the main thread. */
    runDigestTask: RunDigestTask | undefined
  }
}

const DIGEST_WORKER_FILE = new URL('../../workers/digest.ts', import.meta.url).href
/** Sources hashed at once: each is a few listeners and at most 8 MiB in flight, so the bound is generous. */
const MAX_CONCURRENT_SOURCES = 4096
const IDLE_TIMEOUT_MS = 30_000

export default fp<{ config: Config }>(async (app, { config }) => {
  if (config.executionMode !== 'pool') {
    app.decorate('runDigestTask', undefined)
    return
  }
  const pool = new Piscina<DigestTask, DigestResult>({
    filename: DIGEST_WORKER_FILE,
    minThreads: 0,
    maxThreads: 1,
    concurrentTasksPerWorker: MAX_CONCURRENT_SOURCES,
    idleTimeout: IDLE_TIMEOUT_MS,
    // At the event loop's priority. At WORKER_NICENESS it waited behind job threads and the main thread
    // stalled on its backpressure: 100 MB uploads to /api/hash at 2 connections ran 11.7-12.3/s at nice 10,
    // 12.9-14.7/s at nice 5, 15.0-15.3/s at nice 0 (alternating runs), with /health p99 no worse.
    workerData: { niceness: 0 } satisfies WorkerData
  })
  pool.on('error', err => app.log.error({ err }, 'digest thread error'))
  app.decorate('runDigestTask', ((task, transferList) => pool.run(task, { transferList })) satisfies RunDigestTask)
  app.addHook('onClose', () => pool.destroy())
}, { name: 'digests' })
