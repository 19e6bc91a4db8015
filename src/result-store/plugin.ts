// The result store of this app (RESULT_STORAGE), as app.resultStore: undefined when none is set. Opened at
// start (a directory's scan of what earlier runs left goes on in the background), closed with the app once
// the writes under way are done.
import fp from 'fastify-plugin'
import type { Config } from '../config.ts'
import { openStore } from './open.ts'
import { ResultStore } from './result-store.ts'

declare module 'fastify' {
  interface FastifyInstance {
    resultStore: ResultStore | undefined
  }
}

/** A body over this share of a directory's bound would push out many entries for one URL: not kept. */
const MAX_ENTRY_SHARE = 8
/** Bucket stores have no bound of their own: a result over this is not kept (a GET URL's image is rarely near it). */
const MAX_BUCKET_ENTRY_BYTES = 64 * 1024 * 1024

export default fp<{ config: Config }>(async (app, { config }) => {
  const storage = config.resultStorage
  if (storage === undefined) {
    app.decorate('resultStore', undefined)
    return
  }
  const { open, scheme, name, bucket, prefix, directory } = openStore(storage, config, app.stores, count => app.metrics.resultStoreEvictions.inc({ store: 'file' }, count))
  directory?.scanned.catch((err: unknown) => app.log.warn({ err, store: name }, 'result store: the directory could not be read at start; its reads and writes will fail and count as errors'))
  const results = new ResultStore({
    open,
    scheme,
    name,
    bucket,
    prefix,
    ttlMs: config.resultStorageSeconds * 1000,
    maxEntryBytes: storage.kind === 'directory' ? Math.floor(config.resultStorageBytes / MAX_ENTRY_SHARE) : MAX_BUCKET_ENTRY_BYTES,
    log: app.log,
    onRead: outcome => app.metrics.resultStoreReads.inc({ store: name, outcome }),
    onWrite: outcome => app.metrics.resultStoreWrites.inc({ store: name, outcome })
  })
  app.decorate('resultStore', results)
  // Writes under way finish first; a bucket store is app.stores', closed by the sources plugin after this.
  app.addHook('onClose', async () => {
    await results.close()
    await directory?.close()
  })
}, { name: 'result-store', dependencies: ['metrics', 'sources'] })
