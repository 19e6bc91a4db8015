// Where a job's outputs go. A bucket prefix (s3://bucket/prefix, gs://, abs://) or local:///dir, through the stores
// of src/stores/, under the same policy as sources (the scheme switched on, the bucket allowed: an API key writes
// only where it may read); or file:///dir, a folder inside JOBS_DESTINATION_ROOT (empty: such destinations are off),
// so that an API key cannot have files written anywhere on the host.
import { resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { errors } from '../errors.ts'
import { isStoreUrl, parseStoreUrl, storeUrl } from '../stores/location.ts'
import type { Stores } from '../stores/registry.ts'
import type { ObjectLocation, ObjectStore } from '../stores/store.ts'
import { createDirectoryStore } from './directory-store.ts'

export interface Destination {
  store: ObjectStore
  /** The location of a file named `name` under the destination. */
  at (name: string): ObjectLocation
  /** How a written file is reported: the destination's own URL form. */
  url (name: string): string
}

/** Checks a destination as given by a client: SOURCE_FORBIDDEN naming the setting when it is not allowed. */
export async function openDestination (destination: string, root: string, stores: Stores): Promise<Destination> {
  if (isStoreUrl(destination)) return openStorePrefix(destination, stores)
  const url = URL.parse(destination)
  if (url === null) throw new errors.BadOptions('destination is not a URL (file:///dir)')
  if (url.protocol !== 'file:') throw new errors.SourceForbidden(`${url.protocol}// destinations are not available here; use s3://bucket/prefix, gs://, abs://, local:///dir, or file:///dir under JOBS_DESTINATION_ROOT`)
  if (root === '') throw new errors.SourceForbidden('file:// destinations are off (set JOBS_DESTINATION_ROOT)')
  if (url.host !== '' || url.search !== '' || url.hash !== '') throw new errors.BadOptions('a file:// destination is file:///absolute/dir, nothing else')
  const base = resolve(root)
  const dir = resolve(fileURLToPath(url))
  if (dir !== base && !dir.startsWith(base + sep)) throw new errors.SourceForbidden('the destination is not inside JOBS_DESTINATION_ROOT')
  const prefix = dir.slice(base.length + 1)
  const key = (name: string) => prefix === '' ? name : `${prefix}/${name}`
  return {
    store: createDirectoryStore(base),
    at: name => ({ scheme: 'local', bucket: '', key: key(name) }),
    url: name => `file://${resolve(base, key(name))}`
  }
}

async function openStorePrefix (destination: string, stores: Stores): Promise<Destination> {
  const base = parseStoreUrl(destination.replace(/\/+$/, ''))
  if (base.versionId !== undefined) throw new errors.BadOptions('a destination takes no ?versionId=')
  const store = await stores.storeFor(base)
  const at = (name: string): ObjectLocation => ({ scheme: base.scheme, bucket: base.bucket, key: `${base.key}/${name}` })
  return { store, at, url: name => storeUrl(at(name)) }
}
