// The ObjectStore that RESULT_STORAGE names: the bounded directory store, or the bucket store of its scheme
// from app.stores (src/stores/registry.ts), which imports the scheme's SDK only then (a replica without a
// bucket result store never loads one), shared with sources of that scheme. Taken by scheme, with no source
// policy: USE_S3 and the bucket lists guard what URLs may read, not where thumbd keeps its own results.
import type { Config } from '../config.ts'
import type { Stores } from '../stores/registry.ts'
import type { ObjectStore, StoreScheme } from '../stores/store.ts'
import { DirectoryStore } from './directory-store.ts'
import type { ResultStorage } from './location.ts'

export interface OpenedStore {
  /** Makes the store: a directory's at once (its scan starts), a bucket's on the first call (see ResultStore). */
  open: () => Promise<ObjectStore>
  scheme: StoreScheme
  /** file, s3, gs or abs: the metrics label. */
  name: string
  bucket: string
  prefix: string
  /** The directory store, made at start (its scan of what earlier runs left begins then). */
  directory?: DirectoryStore
}

export function openStore (storage: ResultStorage, config: Config, stores: Stores, onEvict: (count: number) => void): OpenedStore {
  if (storage.kind === 'directory') {
    const directory = new DirectoryStore({ root: storage.path, maxBytes: config.resultStorageBytes, onEvict })
    return { open: async () => directory, scheme: 'local', name: 'file', bucket: '', prefix: '', directory }
  }
  const { scheme, bucket, prefix } = storage
  // app.stores closes it with the app.
  return { open: () => stores.store(scheme), scheme, name: scheme, bucket, prefix }
}
