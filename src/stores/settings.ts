// What src/config.ts reads for the stores: how to reach each one, and which schemes are on for sources. The
// connection settings are there even for a scheme that is off for sources, so that the result store or a job's
// output can be written to a bucket no client may read from. Plain data, so the stores and their tests take it
// without the rest of the config. Credentials are not here (except the
// two that imgproxy also takes as settings, GCS_KEY and ABS_KEY): each SDK finds them in its cloud's chain.

export interface BucketLists {
  /** Empty: every bucket (but the denied ones). */
  readonly allowed: readonly string[]
  readonly denied: readonly string[]
}

export interface S3Settings extends BucketLists {
  /** S3_ENDPOINT: an S3-compatible server (MinIO, R2, versitygw ...); undefined: AWS. */
  readonly endpoint?: string
  /** S3_REGION; undefined: the SDK's chain (AWS_REGION, the profile), else us-east-1. */
  readonly region?: string
  readonly forcePathStyle: boolean
}

export interface GcsSettings extends BucketLists {
  /** GCS_ENDPOINT: an emulator or a private endpoint. */
  readonly endpoint?: string
  /** GCS_KEY: a service account's JSON key; undefined: Application Default Credentials. */
  readonly key?: string
}

export interface AbsSettings extends BucketLists {
  /** ABS_NAME: the storage account. */
  readonly name: string
  /** ABS_KEY: its shared key; undefined: DefaultAzureCredential (not loaded: see abs/client.ts). */
  readonly key?: string
  /** ABS_ENDPOINT; undefined: https://<name>.blob.core.windows.net. */
  readonly endpoint?: string
}

export interface LocalSettings {
  /** LOCAL_FILESYSTEM_ROOT, absolute. */
  readonly root: string
}

export interface StoreSettings {
  /** The schemes sources may name: USE_S3, USE_GCS, USE_ABS, LOCAL_FILESYSTEM_ROOT. */
  readonly sources: readonly ('s3' | 'gs' | 'abs' | 'local')[]
  readonly s3: S3Settings
  readonly gs: GcsSettings
  /** `name` is '' while ABS_NAME is unset (the Azure store cannot be made then). */
  readonly abs: AbsSettings
  /** Undefined while LOCAL_FILESYSTEM_ROOT is unset. */
  readonly local?: LocalSettings
  /** FETCH_TIMEOUT_MS: one request to a store, from connect to last byte. */
  readonly timeoutMs: number
}

/** The setting that switches each scheme on, for the refusal that names it. */
export const SWITCH: Readonly<Record<'s3' | 'gs' | 'abs' | 'local', string>> = {
  s3: 'USE_S3=true',
  gs: 'USE_GCS=true',
  abs: 'USE_ABS=true with ABS_NAME',
  local: 'LOCAL_FILESYSTEM_ROOT'
}

/** The settings that list a scheme's buckets. */
export const LISTS: Readonly<Record<'s3' | 'gs' | 'abs', { allowed: string, denied: string }>> = {
  s3: { allowed: 'S3_ALLOWED_BUCKETS', denied: 'S3_DENIED_BUCKETS' },
  gs: { allowed: 'GCS_ALLOWED_BUCKETS', denied: 'GCS_DENIED_BUCKETS' },
  abs: { allowed: 'ABS_ALLOWED_CONTAINERS', denied: 'ABS_DENIED_CONTAINERS' }
}
