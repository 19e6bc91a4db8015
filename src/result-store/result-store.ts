// The result store over any ObjectStore (a directory, a bucket prefix): GET-URL replies looked up by their
// key before any fetch or job, and kept after the reply went out. It never fails a request and never makes
// one wait long: a read that takes longer than READ_TIMEOUT_MS, or fails, is a miss (counted, logged); a
// write starts after the reply is sent, is bounded in time and in number, and its failure is only counted
// and logged. Identical lookups at once share one read.
import type { ObjectLocation, ObjectStore, StoreScheme } from '../stores/store.ts'
import { decodeEntry, encodeEntry, type StoredReply } from './entry.ts'
import { entryPath } from './key.ts'

/** A hit from a healthy store on the same network takes a few ms; past this a miss is cheaper than waiting. */
export const READ_TIMEOUT_MS = 300
/** A write still going after this is abandoned (stores write whole or nothing: no part is left). */
export const WRITE_TIMEOUT_MS = 10_000
/** Writes in flight at once; past this, replies are not kept (a slow store must not pile up their bytes). */
export const MAX_WRITES = 16
/** Failures of the same kind are logged at most once per this period (each is counted). */
const LOG_EVERY_MS = 10_000

export type ReadOutcome = 'hit' | 'miss' | 'error' | 'timeout'
export type WriteOutcome = 'ok' | 'error' | 'skipped'

export interface ResultStoreOptions {
  /**
   * Makes the store, on the first lookup: a bucket store's SDK is then loaded by the first GET URL, not at start
   * (tens of MB a replica that has served nothing does not carry). A failed open is tried again next time.
   */
  open: () => Promise<ObjectStore>
  scheme: StoreScheme
  /** The store's name in metrics and logs: file, s3, gs or abs. */
  name: string
  /** The bucket or container ('' for a directory) and the key prefix ('' or ending in '/'). */
  bucket: string
  prefix: string
  ttlMs: number
  /** Bodies larger than this are not kept. */
  maxEntryBytes: number
  log: { warn (details: object, message: string): void }
  onRead?: (outcome: ReadOutcome) => void
  onWrite?: (outcome: WriteOutcome) => void
  readTimeoutMs?: number
  now?: () => number
}

export class ResultStore {
  readonly name: string
  readonly #options: ResultStoreOptions
  readonly #reading = new Map<string, Promise<{ outcome: ReadOutcome, reply?: StoredReply }>>()
  readonly #writing = new Map<string, Promise<void>>()
  readonly #logged = new Map<string, number>()
  #opened: Promise<ObjectStore> | undefined

  constructor (options: ResultStoreOptions) {
    this.name = options.name
    this.#options = options
  }

  #store (): Promise<ObjectStore> {
    if (this.#opened === undefined) {
      const opening = this.#options.open()
      this.#opened = opening
      opening.catch(() => { if (this.#opened === opening) this.#opened = undefined })
    }
    return this.#opened
  }

  #location (key: string): ObjectLocation {
    return { scheme: this.#options.scheme, bucket: this.#options.bucket, key: `${this.#options.prefix}${entryPath(key)}` }
  }

  #now (): number { return (this.#options.now ?? Date.now)() }

  /** The kept reply of `key`, or undefined (a miss, an expired entry, a failing or slow store). Never rejects. */
  async get (key: string): Promise<StoredReply | undefined> {
    let reading = this.#reading.get(key)
    if (reading === undefined) {
      reading = this.#read(key).finally(() => this.#reading.delete(key))
      this.#reading.set(key, reading)
    }
    const { outcome, reply } = await reading
    this.#options.onRead?.(outcome)
    return reply
  }

  async #read (key: string): Promise<{ outcome: ReadOutcome, reply?: StoredReply }> {
    const location = this.#location(key)
    const stop = new AbortController()
    let timer: NodeJS.Timeout | undefined
    let store: ObjectStore
    try {
      // Outside the read's timeout: a bucket store's first open loads its SDK once (~100 ms), a cost no later read pays.
      store = await this.#store()
    } catch (err) {
      this.#warn('open', { store: this.name, err }, 'result store: the store could not be opened, served as a miss')
      return { outcome: 'error' }
    }
    const late = new Promise<'late'>(resolve => { timer = setTimeout(() => resolve('late'), this.#options.readTimeoutMs ?? READ_TIMEOUT_MS) })
    const reading = (async () => {
      const answer = await store.read(location, { signal: stop.signal })
      return Buffer.concat(await answer.body.toArray({ signal: stop.signal }))
    })()
    try {
      // Raced, not only signalled: a store that ignores its signal still cannot hold the request.
      const bytes = await Promise.race([reading, late])
      if (bytes === 'late') {
        stop.abort()
        reading.catch(() => {})
        this.#warn('timeout', { store: this.name }, `result store: a read took over ${this.#options.readTimeoutMs ?? READ_TIMEOUT_MS} ms, served as a miss`)
        return { outcome: 'timeout' }
      }
      const entry = decodeEntry(bytes)
      // Expired or unreadable: the miss's write replaces it (not removed here: that could race the new write).
      if (entry === undefined || entry.expires <= this.#now()) return { outcome: 'miss' }
      return { outcome: 'hit', reply: { etag: entry.etag, headers: entry.headers, body: entry.body } }
    } catch (err) {
      if (missing(err)) return { outcome: 'miss' }
      this.#warn('read', { store: this.name, err }, 'result store: a read failed, served as a miss')
      return { outcome: 'error' }
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * Keeps `reply` under `key`, in the background: call it once the reply is sent. A key already being
   * written (another request that shared the same job) is not written twice.
   */
  put (key: string, reply: StoredReply): void {
    const count = this.#options.onWrite ?? (() => {})
    if (this.#writing.has(key)) return
    if (this.#writing.size >= MAX_WRITES || reply.body.length > this.#options.maxEntryBytes) return count('skipped')
    const bytes = encodeEntry({ ...reply, expires: this.#now() + this.#options.ttlMs })
    const writing = this.#store().then(store => store.write(this.#location(key), bytes, {
      contentType: 'application/octet-stream',
      metadata: { etag: reply.etag },
      signal: AbortSignal.timeout(WRITE_TIMEOUT_MS)
    })).then(() => count('ok'), (err: unknown) => {
      count('error')
      this.#warn('write', { store: this.name, err }, 'result store: a write failed; the reply was served')
    }).finally(() => this.#writing.delete(key))
    this.#writing.set(key, writing)
  }

  /** Waits for the writes under way (each bounded by WRITE_TIMEOUT_MS); the store is closed by whoever made it. */
  async close (): Promise<void> {
    await Promise.all(this.#writing.values())
  }

  /** Logs a failure, at most once per LOG_EVERY_MS for each kind: a store that is down fails every request. */
  #warn (kind: string, details: object, message: string): void {
    const now = Date.now()
    if ((this.#logged.get(kind) ?? -Infinity) + LOG_EVERY_MS > now) return
    this.#logged.set(kind, now)
    this.#options.log.warn(details, message)
  }
}

/** Whether a store's refusal means the object is not there (a miss, not an error). */
function missing (err: unknown): boolean {
  const { code, statusCode } = err as { code?: string, statusCode?: number }
  return code === 'ENOENT' || code === 'THUMBD_SOURCE_NOT_FOUND' || statusCode === 404
}
