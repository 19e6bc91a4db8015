// The stores by scheme. Each is made on the first use of its scheme, and its SDK imported only then (dynamic
// import): the AWS, Google and Azure SDKs together weigh tens of MB of heap, which a server that never reads a
// bucket should not carry. A source passes the scheme's policy first (storeFor): the scheme switched on
// (SOURCE_FORBIDDEN naming the setting otherwise), the bucket allowed. The result store and job outputs take a
// store by its scheme (store), whether or not sources may name it: their locations are the operator's.
import { errors } from '../errors.ts'
import { LISTS, SWITCH, type BucketLists, type StoreSettings } from './settings.ts'
import type { ObjectLocation, ObjectStore, StoreScheme } from './store.ts'

export interface Stores {
  /** The store for a location, once its scheme and bucket are allowed; SOURCE_FORBIDDEN naming the setting otherwise. */
  storeFor (location: ObjectLocation): Promise<ObjectStore>
  /**
   * The store of a scheme, with no source policy: for locations the operator chose (RESULT_STORAGE, a job
   * destination checked by its own rules). Made on first use, shared with storeFor.
   */
  store (scheme: StoreScheme): Promise<ObjectStore>
  /** Which schemes sources may name. */
  configured (scheme: StoreScheme): boolean
  /** Closes the stores made so far. */
  close (): Promise<void>
}

/** The one module per scheme, loaded when first needed. */
async function load (scheme: StoreScheme, settings: StoreSettings): Promise<ObjectStore> {
  const timeoutMs = settings.timeoutMs
  switch (scheme) {
    case 's3': return (await import('./s3/s3-store.ts')).createS3Store(settings.s3, timeoutMs)
    case 'gs': return (await import('./gcs/gcs-store.ts')).createGcsStore(settings.gs, timeoutMs)
    case 'abs':
      if (settings.abs.name === '') throw new errors.SourceFetchFailed('abs:// needs ABS_NAME, the storage account')
      return (await import('./abs/abs-store.ts')).createAbsStore(settings.abs, timeoutMs)
    case 'local':
      if (settings.local === undefined) throw new errors.SourceForbidden('local:// needs LOCAL_FILESYSTEM_ROOT')
      return (await import('./local/local-store.ts')).createLocalStore(settings.local)
  }
}

export function checkBucket (lists: BucketLists, bucket: string, names: { allowed: string, denied: string }): void {
  if (lists.denied.includes(bucket)) throw new errors.SourceForbidden(`the bucket is listed in ${names.denied}`)
  if (lists.allowed.length > 0 && !lists.allowed.includes(bucket)) throw new errors.SourceForbidden(`the bucket is not listed in ${names.allowed}`)
}

export function createStores (settings: StoreSettings): Stores {
  const made = new Map<StoreScheme, Promise<ObjectStore>>()
  const configured = (scheme: StoreScheme) => settings.sources.includes(scheme)

  function store (scheme: StoreScheme): Promise<ObjectStore> {
    let pending = made.get(scheme)
    if (pending === undefined) {
      pending = load(scheme, settings)
      made.set(scheme, pending)
      // A failed load (a broken install, a missing setting) is tried again next time rather than kept.
      pending.catch(() => made.delete(scheme))
    }
    return pending
  }

  return {
    configured,
    store,
    async storeFor (location) {
      const { scheme } = location
      if (!configured(scheme)) throw new errors.SourceForbidden(`${scheme}:// sources are off (set ${SWITCH[scheme]})`)
      if (scheme !== 'local') checkBucket(settings[scheme], location.bucket, LISTS[scheme])
      return store(scheme)
    },
    async close () {
      const stores = await Promise.allSettled(made.values())
      made.clear()
      await Promise.all(stores.map(s => s.status === 'fulfilled' ? s.value.close() : undefined))
    }
  }
}
