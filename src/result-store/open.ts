// The ObjectStore that RESULT_STORAGE names: the bounded directory store, or a bucket store of src/stores/
// made by its registry, which imports the scheme's SDK only then (a replica without a bucket result store
// never loads one). The result store has its own store instance, apart from the sources': the sources' bucket
// lists guard what URLs may read, not where thumbd keeps its own results.
import type { Config } from '../config.ts'
import { createStores } from '../stores/registry.ts'
import type { ObjectStore } from '../stores/store.ts'
import { DirectoryStore } from './directory-store.ts'
import type { ResultStorage } from './location.ts'

export interface OpenedStore {
  store: ObjectStore
  /** file, s3, gs or abs: the metrics label. */
  name: string
  bucket: string
  prefix: string
}

export async function openStore (storage: ResultStorage, config: Config, onEvict: (count: number) => void): Promise<OpenedStore> {
  if (storage.kind === 'directory') {
    return { store: new DirectoryStore({ root: storage.path, maxBytes: config.resultStorageBytes, onEvict }), name: 'file', bucket: '', prefix: '' }
  }
  const { scheme, bucket, prefix, settings } = storage
  if (settings === undefined) throw new Error('a bucket result store needs its settings (src/config.ts fills them in)')
  const stores = createStores(settings)
  const store = await stores.storeFor({ scheme, bucket, key: prefix })
  return { store, name: scheme, bucket, prefix }
}
