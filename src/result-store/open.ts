// The ObjectStore that RESULT_STORAGE names: the bounded directory store, or a bucket store of src/stores/
// loaded only when named (their SDKs are large: a replica without a bucket result store never loads one).
import type { Config } from '../config.ts'
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
  throw new Error(`RESULT_STORAGE=${storage.scheme}://${storage.bucket}/${storage.prefix}: the ${storage.scheme} store is not in this build yet (use file:///dir)`)
}
