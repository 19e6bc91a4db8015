// The queue engine of asynchronous jobs: pg-boss (docs/architecture.md says why), on the PostgreSQL server that
// JOBS_QUEUE names, whose tables the replicas share, or, when it names none, on PGlite: PostgreSQL itself compiled
// to WebAssembly, persisted in JOBS_DATA_DIR, through pg-boss's own PGlite adapter (backend 'pglite'). The same
// SQL, the same leases and retries either way; only where the database lives differs.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { Db as IDatabase, PgBoss, Queue } from 'pg-boss'
import type { Config } from '../config.ts'

export const MEDIA_QUEUE = 'thumbd-media'
export const WEBHOOK_QUEUE = 'thumbd-webhook'
/** pg-boss's tables live in a schema of their own; the per-job progress rows in another (progress.ts). */
export const ENGINE_SCHEMA = 'thumbd_jobs'

/** Attempts of a media job: the first and two retries, backing off 5 s, 10 s (then failed, with its error). */
export const MEDIA_RETRIES = 2
const MEDIA_RETRY_DELAY_SECONDS = 5
/** A job is failed (and retried) when it has run this long, whatever its lease: bounded by the steps' own timeouts anyway. */
const MEDIA_EXPIRE_SECONDS = 4 * 3600
/** Webhooks: 12 attempts from 10 s apart doubling up to an hour: delivered within about 4 h, or given up. */
const WEBHOOK_RETRIES = 11
const WEBHOOK_RETRY_DELAY_SECONDS = 10
const WEBHOOK_RETRY_DELAY_MAX_SECONDS = 3600

export interface Engine {
  boss: PgBoss
  /** Plain SQL on the engine's database (the progress rows). */
  sql<R = Record<string, unknown>> (text: string, values?: unknown[]): Promise<R[]>
  embedded: boolean
  close (): Promise<void>
}

/** Whether the embedded queue has a database already: then it may hold jobs to resume, and opens at start. */
export const embeddedDatabaseExists = (config: Config) => existsSync(join(config.jobsDataDir, 'PG_VERSION'))

/** pg-boss's bring-your-own database: each statement sent to the PGlite thread (pglite-thread.ts), its rows back. */
async function openPgliteThread (dataDir: string, niceness: number): Promise<IDatabase & { close (): Promise<void> }> {
  const worker = new Worker(new URL('./pglite-thread.ts', import.meta.url), { workerData: { dataDir, niceness } })
  const pending = new Map<number, { resolve (rows: unknown[]): void, reject (err: Error): void }>()
  let next = 0
  let failed: Error | undefined
  const fail = (err: Error) => {
    failed = err
    for (const { reject } of pending.values()) reject(err)
    pending.clear()
  }
  worker.on('error', fail)
  worker.on('exit', () => fail(new Error('the embedded queue\'s database thread exited')))
  await new Promise<void>((resolve, reject) => {
    worker.once('error', reject)
    worker.on('message', (message: 'ready' | { id: number, rows?: unknown[], error?: { message: string, code?: string } }) => {
      if (message === 'ready') return resolve()
      const waiting = pending.get(message.id)
      pending.delete(message.id)
      if (message.error !== undefined) waiting?.reject(Object.assign(new Error(message.error.message), { code: message.error.code }))
      else waiting?.resolve(message.rows!)
    })
  })
  return {
    executeSql (text: string, values?: unknown[]) {
      if (failed !== undefined) return Promise.reject(failed)
      const id = next++
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve: rows => resolve({ rows }), reject })
        worker.postMessage({ id, text, values })
      })
    },
    async close () {
      const exited = new Promise(resolve => worker.once('exit', resolve))
      worker.postMessage('close')
      await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 5000).unref())])
      await worker.terminate()
    }
  }
}

export async function openEngine (config: Config, onError: (err: Error) => void): Promise<Engine> {
  const { PgBoss } = await import('pg-boss')
  const embedded = config.jobsQueue === ''
  const pglite = embedded ? await openPgliteThread(config.jobsDataDir, config.workerNiceness) : undefined
  // The supervisor fails (and so retries) jobs whose lease lapsed: checked a few times per lease.
  const checkEvery = Math.max(2, Math.floor(config.jobLeaseSeconds / 4))
  const boss = new PgBoss({
    ...(pglite === undefined ? { connectionString: config.jobsQueue, max: 4 } : { db: pglite, backend: 'pglite' as const }),
    schema: ENGINE_SCHEMA,
    superviseIntervalSeconds: checkEvery,
    monitorIntervalSeconds: checkEvery,
    // No cron schedules are used: no clock-skew checks nor schedule polling.
    schedule: false
  })
  boss.on('error', onError)
  await boss.start()
  const media: Omit<Queue, 'name'> = {
    retryLimit: MEDIA_RETRIES,
    retryDelay: MEDIA_RETRY_DELAY_SECONDS,
    retryBackoff: true,
    // The lease: a worker renews it every half lease while its handler runs; a killed one stops renewing.
    heartbeatSeconds: config.jobLeaseSeconds,
    expireInSeconds: MEDIA_EXPIRE_SECONDS
  }
  const webhook: Omit<Queue, 'name'> = {
    retryLimit: WEBHOOK_RETRIES,
    retryDelay: WEBHOOK_RETRY_DELAY_SECONDS,
    retryBackoff: true,
    retryDelayMax: WEBHOOK_RETRY_DELAY_MAX_SECONDS,
    expireInSeconds: 120
  }
  await ensureQueue(boss, MEDIA_QUEUE, media)
  await ensureQueue(boss, WEBHOOK_QUEUE, webhook)
  const db = boss.getDb()
  return {
    boss,
    embedded,
    sql: async (text, values) => (await db.executeSql(text, values)).rows,
    async close () {
      await boss.stop({ graceful: true, timeout: 5000, close: true })
      await pglite?.close()
    }
  }
}

/** Created once (replicas race to it at their first start: the loser's "exists" is fine); the lease follows the config. */
async function ensureQueue (boss: PgBoss, name: string, options: Omit<Queue, 'name'>) {
  if (await boss.getQueue(name) === null) {
    try {
      await boss.createQueue(name, options)
      return
    } catch (err) {
      if (await boss.getQueue(name) === null) throw err
    }
  }
  const { retryDelayMax: _max, heartbeatSeconds, ...rest } = options
  await boss.updateQueue(name, { ...rest, ...(heartbeatSeconds === undefined ? {} : { heartbeatSeconds }) })
}
