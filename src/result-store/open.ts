// The ObjectStore that RESULT_STORAGE names: the bounded directory store, or a bucket store of src/stores/
// made by its registry, which imports the scheme's SDK only then (a replica without a bucket result store
// never loads one). The result store has its own store instance, apart from the sources': the sources' bucket
// lists guard what URLs may read, not where thumbd keeps its own results.
import type { Config } from '../config.ts'
import { createStores } from '../stores/registry.ts'
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

export function openStore (storage: ResultStorage, config: Config, onEvict: (count: number) => void): OpenedStore {
  if (storage.kind === 'directory') {
    const directory = new DirectoryStore({ root: storage.path, maxBytes: config.resultStorageBytes, onEvict })
    return { open: async () => directory, scheme: 'local', name: 'file', bucket: '', prefix: '', directory }
  }
  const { scheme, bucket, prefix, settings } = storage
  if (settings === undefined) throw new Error('a bucket result store needs its settings (src/config.ts fills them in)')
  // A registry of its own: a failed load is tried again on the next call; closing the store closes its client.
  const stores = createStores(settings)
  return { open: () => stores.storeFor({ scheme, bucket, key: prefix }), scheme, name: scheme, bucket, prefix }
}
