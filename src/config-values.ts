// The text forms of the variables that hold several values (lists, format=quality, name=options, keys paired
// with salts), read into what Config holds; a malformed one is a ConfigError naming the variable. src/config.ts
// validates everything else against its schema.
import { isAbsolute } from 'node:path'
import { checkPresets } from './signed-urls/parse.ts'
import { parseSigningKeys, type SigningKey } from './signed-urls/signature.ts'
import type { StoreSettings } from './stores/settings.ts'

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** A comma-separated list, blanks dropped. */
export const list = (value: string) => value.split(',').map(s => s.trim()).filter(Boolean)

/** FORMAT_QUALITY: "jpeg=80,webp=79,avif=63"; a format left out takes 80. */
export function formatQuality (value: string): Record<'jpeg' | 'webp' | 'avif', number> {
  const qualities = { jpeg: 80, webp: 80, avif: 80 }
  for (const entry of list(value)) {
    const match = /^(jpeg|jpg|webp|avif)=(\d{1,3})$/.exec(entry)
    if (match === null || Number(match[2]) < 1 || Number(match[2]) > 100) throw new ConfigError(`FORMAT_QUALITY entry "${entry}" is not format=quality (jpeg, webp or avif; 1-100)`)
    qualities[match[1] === 'jpg' ? 'jpeg' : match[1] as 'jpeg' | 'webp' | 'avif'] = Number(match[2])
  }
  return qualities
}

/** URL_PRESETS: "name=options;name2=options". */
export function presets (value: string): Record<string, string> {
  const entries = value.split(';').map(s => s.trim()).filter(Boolean).map(entry => {
    const match = /^([\w-]+)=(.+)$/.exec(entry)
    if (match === null) throw new ConfigError(`URL_PRESETS entry "${entry}" is not name=options`)
    return [match[1]!, match[2]!.trim()] as const
  })
  const named = Object.fromEntries(entries)
  try {
    checkPresets(named)
  } catch (err) {
    throw new ConfigError(`URL_PRESETS: ${(err as Error).message}`)
  }
  return named
}

/** URL_SIGNING_KEYS and URL_SIGNING_SALTS, paired by position (signed-urls/signature.ts says what is wrong). */
export function signingKeys (keys: string[], salts: string[]): SigningKey[] {
  try {
    return parseSigningKeys(keys, salts)
  } catch (err) {
    throw new ConfigError((err as Error).message)
  }
}

/** The store settings (src/stores/settings.ts): how to reach each store, and which schemes sources may name. */
type StoreEnv = Record<'USE_S3' | 'USE_GCS' | 'USE_ABS', boolean> & { S3_FORCE_PATH_STYLE: '' | 'true' | 'false' } & { FETCH_TIMEOUT_MS: number } &
  Record<'S3_ENDPOINT' | 'S3_REGION' | 'S3_ALLOWED_BUCKETS' | 'S3_DENIED_BUCKETS' | 'GCS_ENDPOINT' | 'GCS_KEY' | 'GCS_ALLOWED_BUCKETS' | 'GCS_DENIED_BUCKETS' |
  'ABS_NAME' | 'ABS_KEY' | 'ABS_ENDPOINT' | 'ABS_ALLOWED_CONTAINERS' | 'ABS_DENIED_CONTAINERS' | 'LOCAL_FILESYSTEM_ROOT', string>

export function storeSettings (env: StoreEnv): StoreSettings {
  const endpoint = (name: string, value: string) => {
    if (value === '') return undefined
    const url = URL.parse(value)
    if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') {
      // Never the value itself: the refused URL may hold a key in its user info or a SAS signature in its query,
      // and this line goes to stderr and the container's log. Its scheme and host are enough to find it.
      const shown = url !== null && url.host !== '' ? ` (got ${url.protocol}//${url.host}/...)` : ''
      throw new ConfigError(`${name} must be an http(s) URL without credentials${shown}`)
    }
    return value
  }
  // Checked whether or not the scheme is on, so a typo is met at start rather than the day it is switched on.
  const s3Endpoint = endpoint('S3_ENDPOINT', env.S3_ENDPOINT)
  const gcsEndpoint = endpoint('GCS_ENDPOINT', env.GCS_ENDPOINT)
  const absEndpoint = endpoint('ABS_ENDPOINT', env.ABS_ENDPOINT)
  if (env.USE_ABS && env.ABS_NAME === '') throw new ConfigError('USE_ABS=true needs ABS_NAME, the storage account')
  if (env.GCS_KEY !== '') {
    let key: { client_email?: unknown, private_key?: unknown } | undefined
    try {
      key = JSON.parse(env.GCS_KEY)
    } catch {}
    // Never echo it: it is a private key.
    if (typeof key?.client_email !== 'string' || typeof key.private_key !== 'string') throw new ConfigError('GCS_KEY must be a service account\'s JSON key (with client_email and private_key)')
  }
  if (env.LOCAL_FILESYSTEM_ROOT !== '' && !isAbsolute(env.LOCAL_FILESYSTEM_ROOT)) throw new ConfigError(`LOCAL_FILESYSTEM_ROOT must be an absolute path (got "${env.LOCAL_FILESYSTEM_ROOT}")`)
  const lists = (allowed: string, denied: string) => ({ allowed: Object.freeze(list(allowed)), denied: Object.freeze(list(denied)) })
  const optional = (value: string) => value === '' ? undefined : value
  // Path style unless told otherwise when S3_ENDPOINT is set (imgproxy's IMGPROXY_S3_ENDPOINT_USE_PATH_STYLE
  // default): a server that serves only path style reads Host media.<endpoint> /secret/x.jpg as bucket "secret",
  // a bucket the lists were never asked about. AWS itself is addressed virtual-hosted style.
  const pathStyle = env.S3_FORCE_PATH_STYLE === '' ? s3Endpoint !== undefined : env.S3_FORCE_PATH_STYLE === 'true'
  const on = { s3: env.USE_S3, gs: env.USE_GCS, abs: env.USE_ABS, local: env.LOCAL_FILESYSTEM_ROOT !== '' }
  return Object.freeze({
    timeoutMs: env.FETCH_TIMEOUT_MS,
    sources: Object.freeze((['s3', 'gs', 'abs', 'local'] as const).filter(scheme => on[scheme])),
    s3: Object.freeze({ endpoint: s3Endpoint, region: optional(env.S3_REGION), forcePathStyle: pathStyle, ...lists(env.S3_ALLOWED_BUCKETS, env.S3_DENIED_BUCKETS) }),
    gs: Object.freeze({ endpoint: gcsEndpoint, key: optional(env.GCS_KEY), ...lists(env.GCS_ALLOWED_BUCKETS, env.GCS_DENIED_BUCKETS) }),
    abs: Object.freeze({ name: env.ABS_NAME, key: optional(env.ABS_KEY), endpoint: absEndpoint, ...lists(env.ABS_ALLOWED_CONTAINERS, env.ABS_DENIED_CONTAINERS) }),
    local: env.LOCAL_FILESYSTEM_ROOT === '' ? undefined : Object.freeze({ root: env.LOCAL_FILESYSTEM_ROOT })
  })
}
