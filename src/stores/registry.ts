// The stores by scheme. Each is made on the first use of its scheme, and its SDK imported only then (dynamic
// import): the AWS, Google and Azure SDKs together weigh tens of MB of heap, which a server that never reads a
// bucket should not carry. Every read and write passes the scheme's policy first: the scheme switched on
// (SOURCE_FORBIDDEN naming the setting otherwise), the bucket allowed.
import { errors } from '../errors.ts'
import { LISTS, SWITCH, type BucketLists, type StoreSettings } from './settings.ts'
import type { ObjectLocation, ObjectStore, StoreScheme } from './store.ts'

export interface Stores {
  /** The store for a location, once its scheme and bucket are allowed; SOURCE_FORBIDDEN naming the setting otherwise. */
  storeFor (location: ObjectLocation): Promise<ObjectStore>
  /** Which schemes are switched on. */
  configured (scheme: StoreScheme): boolean
  /** Closes the stores made so far. */
  close (): Promise<void>
}

/** The one module per scheme, loaded when first needed. */
async function load (scheme: StoreScheme, settings: StoreSettings): Promise<ObjectStore> {
  const timeoutMs = settings.timeoutMs
  switch (scheme) {
    case 's3': return (await import('./s3/s3-store.ts')).createS3Store(settings.s3!, timeoutMs)
    case 'gs': return (await import('./gcs/gcs-store.ts')).createGcsStore(settings.gs!, timeoutMs)
    case 'abs': return (await import('./abs/abs-store.ts')).createAbsStore(settings.abs!, timeoutMs)
    case 'local': return (await import('./local/local-store.ts')).createLocalStore(settings.local!)
  }
}

export function checkBucket (lists: BucketLists, bucket: string, names: { allowed: string, denied: string }): void {
  if (lists.denied.includes(bucket)) throw new errors.SourceForbidden(`the bucket is listed in ${names.denied}`)
  if (lists.allowed.length > 0 && !lists.allowed.includes(bucket)) throw new errors.SourceForbidden(`the bucket is not listed in ${names.allowed}`)
}

export function createStores (settings: StoreSettings): Stores {
  const made = new Map<StoreScheme, Promise<ObjectStore>>()
  const configured = (scheme: StoreScheme) => settings[scheme] !== undefined

  return {
    configured,
    async storeFor (location) {
      const { scheme } = location
      if (!configured(scheme)) throw new errors.SourceForbidden(`${scheme}:// sources are off (set ${SWITCH[scheme]})`)
      if (scheme !== 'local') checkBucket(settings[scheme]!, location.bucket, LISTS[scheme])
      let store = made.get(scheme)
      if (store === undefined) {
        store = load(scheme, settings)
        made.set(scheme, store)
        // A failed load (a broken install) is tried again next time rather than kept.
        store.catch(() => made.delete(scheme))
      }
      return store
    },
    async close () {
      const stores = await Promise.allSettled(made.values())
      made.clear()
      await Promise.all(stores.map(s => s.status === 'fulfilled' ? s.value.close() : undefined))
    }
  }
}
