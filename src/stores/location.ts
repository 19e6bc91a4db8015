// How a store URL is spelled, as imgproxy spells it: `s3://bucket/key[?versionId=v]`, `gs://bucket/key`,
// `abs://container/key`, `local:///path`. The key is the URL's path after the bucket, percent-decoded once, so
// a key's `%`, `#`, `?` and space are written %25, %23, %3F and %20 (non-ASCII as its UTF-8 %XX or as itself);
// `?versionId=` is the only query (S3 only). Parsed by hand, not by WHATWG URL, which would resolve `a/../b` into
// `b` and so read another object than the one named: a key with `.` or `..` segments is refused instead, as
// some S3-compatible servers keep objects as files (versitygw's posix backend) and such a key could leave the bucket.
import { errors } from '../errors.ts'
import type { ObjectLocation, StoreScheme } from './store.ts'

export const STORE_SCHEMES: readonly StoreScheme[] = ['s3', 'gs', 'abs', 'local']

const STORE_URL = /^(s3|gs|abs|local):\/\/([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?$/i
/** Bucket and container names (S3's rules are the widest: letters, digits, '.', '-', '_' for old buckets). */
const BUCKET = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/

/** Is this a store URL (by its scheme)? Anything else is for the HTTP fetcher. */
export function isStoreUrl (url: string): boolean {
  return /^(s3|gs|abs|local):/i.test(url)
}

/** The location a store URL names; BAD_OPTIONS for a malformed one, SOURCE_FORBIDDEN for dot segments. */
export function parseStoreUrl (url: string): ObjectLocation {
  const match = STORE_URL.exec(url)
  if (match === null) throw new errors.BadOptions('a store URL is s3://bucket/key, gs://bucket/key, abs://container/key or local:///path (a "#" in a key is written %23)')
  const scheme = match[1]!.toLowerCase() as StoreScheme
  const [bucket, path = '', query] = [match[2]!, match[3], match[4]]
  if (scheme === 'local' ? bucket !== '' : !BUCKET.test(bucket)) {
    throw new errors.BadOptions(scheme === 'local' ? 'a local URL is local:///path (three slashes: no host)' : `"${bucket}" is not a bucket or container name`)
  }
  let key: string
  try {
    key = decodeURIComponent(path.slice(1))
  } catch {
    throw new errors.BadOptions('the store URL has invalid percent-encoding')
  }
  if (key === '' || key.includes('\0')) throw new errors.BadOptions('the store URL names no object')
  if (key.split('/').some(segment => segment === '.' || segment === '..')) {
    throw new errors.SourceForbidden(scheme === 'local' ? 'the path has "." or ".." segments (local:// reads only below LOCAL_FILESYSTEM_ROOT)' : 'object keys with "." or ".." segments are not read')
  }
  const location: ObjectLocation = { scheme, bucket, key }
  if (query !== undefined && query !== '') {
    const params = new URLSearchParams(query)
    const versionId = params.get('versionId')
    if (scheme !== 's3' || [...params.keys()].some(name => name !== 'versionId') || versionId === null || versionId === '' || params.getAll('versionId').length > 1) {
      throw new errors.BadOptions('?versionId= is the only query a store URL takes (s3:// only); a "?" in a key is written %3F')
    }
    location.versionId = versionId
  }
  return location
}

/** The URL of a location, in the spelling parseStoreUrl reads back to the same location. */
export function storeUrl ({ scheme, bucket, key, versionId }: ObjectLocation): string {
  const path = key.split('/').map(encodeURIComponent).join('/')
  return `${scheme}://${bucket}/${path}${versionId === undefined ? '' : `?versionId=${encodeURIComponent(versionId)}`}`
}

/** What a log line or a reply may say of a location: its scheme and bucket, never a local path (under the root or not). */
export function describeLocation ({ scheme, bucket }: ObjectLocation): string {
  return scheme === 'local' ? 'local://' : `${scheme}://${bucket}`
}
