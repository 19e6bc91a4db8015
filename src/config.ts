// Config is read here and only here: validated once against one schema, then frozen.
// .env.example mirrors CONFIG_SCHEMA variable for variable (a test keeps them in step). The variables whose
// text holds several values are read by src/config-values.ts.
import { randomBytes } from 'node:crypto'
import { availableParallelism, tmpdir } from 'node:os'
import { envSchema } from 'env-schema'
import { Type, type Static } from 'typebox'
import { JOBS_PER_THREAD } from './jobs/pairing.ts'
import { describeSchemaErrors, type SchemaError } from './schema-errors.ts'
import { MAX_ANIMATION_FRAMES, MAX_ANIMATION_FRAMES_LIMIT } from '../contract/limits.ts'
import { ConfigError, formatQuality, list, presets, signingKeys, storeSettings } from './config-values.ts'
import type { SigningKey } from './signed-urls/signature.ts'
import type { StoreSettings } from './stores/settings.ts'
import { parseAllowedSources } from './sources/url-policy.ts'
import { parseResultStorage, type ResultStorage } from './result-store/location.ts'

export { ConfigError }

export const CONFIG_SCHEMA = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'TCP port to listen on' }),
  HOST: Type.String({ minLength: 1, default: '0.0.0.0', description: 'address to bind' }),
  METRICS_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 0, description: 'serve GET /metrics on this port, on a listener of its own, and no longer on PORT (0: on PORT, with the API)' }),
  METRICS_HOST: Type.String({ default: '', description: 'address the METRICS_PORT listener binds (empty: as HOST); 127.0.0.1 keeps it to this host, but a Prometheus that scrapes the pod IP needs 0.0.0.0' }),
  API_KEYS: Type.String({ default: '', description: 'comma-separated bearer keys for /api/*; empty: one is generated and logged at start' }),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info', description: 'pino log level' }),
  EXECUTION_MODE: Type.Enum(['pool', 'inline'], { default: 'pool', description: 'pool: jobs run in worker threads; inline: on the main thread (for comparison only)' }),
  CLUSTER_WORKERS: Type.Integer({ minimum: 0, maximum: 256, default: 0, description: 'for load/shapes/cluster.ts, a comparison shape of npm run load -- --compare: fork this many node:cluster copies of the server (the product itself ignores it: run more replicas)' }),
  POOL_THREADS: Type.Integer({ minimum: 0, maximum: 256, default: 0, description: 'worker threads in the pool (0: one per core)' }),
  WORKER_NICENESS: Type.Integer({ minimum: 0, maximum: 19, default: 10, description: 'nice value of job work (worker threads, their ffmpeg, libuv\'s thread pool and libvips\'s threads), so the event loop always gets a core first (0: same priority)' }),
  MAX_SOURCE_BYTES: Type.Integer({ minimum: 1, maximum: 17179869184, default: 134217728, description: 'largest upload or fetched source, in bytes' }),
  MAX_INPUT_PIXELS: Type.Integer({ minimum: 1, maximum: 1073741824, default: 50000000, description: 'largest image or video frame, in pixels (width x height)' }),
  MAX_ANIMATION_FRAMES: Type.Integer({ minimum: 1, maximum: MAX_ANIMATION_FRAMES_LIMIT, default: MAX_ANIMATION_FRAMES, description: 'most frames of an animated GIF/WebP (more: 413) or of a video preview (more: 400); all frames together may have at most 4 x MAX_INPUT_PIXELS pixels' }),
  MAX_VIDEO_SECONDS: Type.Number({ exclusiveMinimum: 0, maximum: 604800, default: 14400, description: 'longest video accepted, in seconds' }),
  MAX_QUEUE_WAIT_MS: Type.Integer({ minimum: 0, maximum: 600000, default: 5000, description: 'admission bound: a job whose expected wait for a worker exceeds this is refused with 503 OVERLOADED' }),
  PRESSURE_MAX_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, maximum: 60000, default: 1000, description: 'job routes answer 503 while the event loop lags more than this (0: off)' }),
  PRESSURE_MAX_RSS_BYTES: Type.Integer({ minimum: 0, maximum: 1099511627776, default: 0, description: 'job routes answer 503 while the process RSS is above this (0: off)' }),
  JOB_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600000, default: 30000, description: 'a job running longer is cancelled and answered 504' }),
  MEMORY_SPOOL_BYTES: Type.Integer({ minimum: 0, maximum: 1073741824, default: 16777216, description: 'image sources up to this size stay in memory; larger ones and all videos go to a temp file' }),
  ALLOWED_SOURCES: Type.String({ default: '', description: 'comma-separated URL prefixes that URL sources must start with (empty: any public URL)' }),
  FETCH_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600000, default: 15000, description: 'a URL source must be fetched completely within this time (a video read by ranges: each range request)' }),
  FETCH_MIN_BYTES_PER_SECOND: Type.Integer({ minimum: 0, maximum: 1073741824, default: 16384, description: 'a URL source must arrive at least this fast, over every 2 s window after its headers, or its fetch is cut with 502 SOURCE_FETCH_FAILED and its slot freed (0: off)' }),
  MAX_CONCURRENT_FETCHES: Type.Integer({ minimum: 1, maximum: 1024, default: 16, description: 'URL sources fetched at once; past it, 503 OVERLOADED before fetching (each holds up to MEMORY_SPOOL_BYTES in memory)' }),
  MAX_RANGE_BYTES: Type.Integer({ minimum: 0, maximum: 1099511627776, default: 268435456, description: 'a remote video read by range requests may cost at most this many bytes from its origin, per request to thumbd (413 past it)' }),
  MAX_RANGE_REQUESTS: Type.Integer({ minimum: 0, maximum: 100000, default: 500, description: 'and at most this many range requests (0: remote videos are always downloaded whole, within MAX_SOURCE_BYTES)' }),
  RANGE_READ_MIN_BYTES: Type.Integer({ minimum: 0, maximum: 1099511627776, default: 16777216, description: 'remote videos from this size up are read by range requests when their server supports them; smaller ones are downloaded whole' }),
  ALLOW_PRIVATE_SOURCES: Type.Boolean({ default: false, description: 'let URL sources reach loopback/private addresses (tests, private networks)' }),
  USE_S3: Type.Boolean({ default: false, description: 's3://bucket/key[?versionId=] sources, read with the AWS SDK\'s default credential chain (environment, shared profile, instance or task role)' }),
  S3_ENDPOINT: Type.String({ default: '', description: 'an S3-compatible server\'s http(s) URL (MinIO, R2, versitygw ...); empty: AWS' }),
  S3_REGION: Type.String({ default: '', description: 'the S3 region (empty: AWS_REGION or the profile\'s, else us-east-1)' }),
  S3_FORCE_PATH_STYLE: Type.Union([Type.Literal(''), Type.Literal('true'), Type.Literal('false')], { default: '', description: 'address buckets as endpoint/bucket/key (true) rather than bucket.endpoint/key (false); empty: true with S3_ENDPOINT (as imgproxy), false for AWS' }),
  S3_ALLOWED_BUCKETS: Type.String({ default: '', description: 'comma-separated buckets s3:// sources may name (empty: any)' }),
  S3_DENIED_BUCKETS: Type.String({ default: '', description: 'comma-separated buckets s3:// sources may not name' }),
  USE_GCS: Type.Boolean({ default: false, description: 'gs://bucket/key sources, read with Application Default Credentials unless GCS_KEY' }),
  GCS_ENDPOINT: Type.String({ default: '', description: 'a GCS-compatible server\'s http(s) URL (an emulator); empty: Google' }),
  GCS_KEY: Type.String({ default: '', description: 'a service account\'s JSON key (empty: Application Default Credentials)' }),
  GCS_ALLOWED_BUCKETS: Type.String({ default: '', description: 'comma-separated buckets gs:// sources may name (empty: any)' }),
  GCS_DENIED_BUCKETS: Type.String({ default: '', description: 'comma-separated buckets gs:// sources may not name' }),
  USE_ABS: Type.Boolean({ default: false, description: 'abs://container/key sources from the storage account ABS_NAME' }),
  ABS_NAME: Type.String({ default: '', description: 'the Azure storage account' }),
  ABS_KEY: Type.String({ default: '', description: 'its shared key (empty: the host\'s Azure identity, through DefaultAzureCredential: environment, workload or managed identity, Azure CLI)' }),
  ABS_ENDPOINT: Type.String({ default: '', description: 'the blob service\'s http(s) URL (Azurite, a sovereign cloud); empty: https://ABS_NAME.blob.core.windows.net' }),
  ABS_ALLOWED_CONTAINERS: Type.String({ default: '', description: 'comma-separated containers abs:// sources may name (empty: any)' }),
  ABS_DENIED_CONTAINERS: Type.String({ default: '', description: 'comma-separated containers abs:// sources may not name' }),
  LOCAL_FILESYSTEM_ROOT: Type.String({ default: '', description: 'local:///path sources are read below this absolute directory, and nowhere else (empty: local:// off)' }),
  FFMPEG_PATH: Type.String({ minLength: 1, default: 'ffmpeg', description: 'ffmpeg binary' }),
  FFPROBE_PATH: Type.String({ minLength: 1, default: 'ffprobe', description: 'ffprobe binary' }),
  FFMPEG_ZYGOTE: Type.Union([Type.Literal('auto'), Type.Literal('off')], { default: 'auto', description: 'auto: fork ffmpeg/ffprobe from a preloaded zygote when native/ffmpeg-zygote.so is built and loads; off: start each run afresh' }),
  JPEG_DECODER: Type.Union([Type.Literal('turbojpeg'), Type.Literal('sandbox'), Type.Literal('sharp')], { default: 'turbojpeg', description: 'turbojpeg: JPEGs reduced at least 2 times (8-bit YCbCr or grey, untagged or sRGB) are decoded by libturbojpeg in the pool thread, at their scale, and handed to sharp (sharp where the library does not load); sandbox (opt-in: ~1.1-1.17x the CPU per JPEG, JPEG only so far): those JPEGs decoded by native/image-decode in the decoder sandbox (turbojpeg where it is not built, said at start); sharp: every image through sharp' }),
  IMAGE_DECODER: Type.Union([Type.Literal('in-process'), Type.Literal('sandbox')], { default: 'in-process', description: 'where still images are parsed and decoded: in-process, by sharp (and libturbojpeg, JPEG_DECODER) in the pool thread; sandbox (opt-in), by native/image-decode (JPEGs libturbojpeg takes, PNG, WebP, GIF\'s first frame) and native/heif-decode (AVIF) in the decoder sandbox, the pool thread resizing and encoding their pixels (animations, /api/info and the JPEGs libturbojpeg does not take stay with sharp in the pool thread; what is not built stays there too, said at start)' }),
  JPEG_SHRINK: Type.Union([Type.Literal('auto'), Type.Literal('quality'), Type.Literal('imgproxy')], { default: 'auto', description: 'the decode scale of a reduced JPEG: quality, sharp\'s (the thumbnails thumbd always made); imgproxy, imgproxy\'s (up to half the pixels decoded, a softer thumbnail: imgproxy\'s own pixels); auto, imgproxy\'s for GET URLs in its dialect and sharp\'s for the API (with JPEG_DECODER=turbojpeg or sandbox only)' }),
  TMP_DIR: Type.String({ default: '', description: 'where temp files go (empty: the OS temp dir); each process uses its own subfolder' }),
  SHUTDOWN_GRACE_MS: Type.Integer({ minimum: 0, maximum: 600000, default: 25000, description: 'on SIGTERM, how long in-flight jobs may take before they are cancelled' }),
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600000, default: 10000, description: 'a connection must deliver its request line and headers within this time, or it is closed (408)' }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600000, default: 5000, description: 'an idle keep-alive connection is closed after this time' }),
  MIN_BODY_BYTES_PER_SECOND: Type.Integer({ minimum: 0, maximum: 1073741824, default: 16384, description: 'a request body must arrive at least this fast, over every 5 s window, or the request gets 408 REQUEST_TIMEOUT and its connection is closed (0: off)' }),
  URL_SIGNING_KEYS: Type.String({ default: '', description: 'hex keys for signed GET URLs (/i/...), comma-separated, paired by position with URL_SIGNING_SALTS (several at once, for rotation); empty: GET URLs are off unless ALLOW_UNSIGNED_URLS' }),
  URL_SIGNING_SALTS: Type.String({ default: '', description: 'hex salts, comma-separated, one per URL_SIGNING_KEYS entry' }),
  ALLOW_UNSIGNED_URLS: Type.Boolean({ default: false, description: 'accept GET URLs whose signature is "insecure" (development only)' }),
  URL_PRESETS: Type.String({ default: '', description: 'named option sets for GET URLs, e.g. "thumb=rs:fit:320:0/q:80;small=w:100" (a preset named default applies to every URL)' }),
  URL_CACHE_MAX_AGE_SECONDS: Type.Integer({ minimum: 0, maximum: 31536000, default: 31536000, description: 'Cache-Control max-age of GET URL replies' }),
  RESULT_CACHE_BYTES: Type.Integer({ minimum: 0, maximum: 1073741824, default: 33554432, description: 'bytes of recent GET URL replies kept in memory to answer identical requests just after (0: off)' }),
  RESULT_CACHE_SECONDS: Type.Integer({ minimum: 0, maximum: 3600, default: 10, description: 'how long a kept GET URL reply may answer identical requests (0: off)' }),
  RESULT_STORAGE: Type.String({ default: '', description: 'where GET URL results are kept for every replica: file:///dir, or a bucket prefix s3://bucket/prefix, gs://bucket/prefix, abs://container/prefix (empty: no result store)' }),
  RESULT_STORAGE_SECONDS: Type.Integer({ minimum: 1, maximum: 31536000, default: 86400, description: 'how long a kept GET URL result may answer, in seconds (a changed source shows after at most this; cb in the URL changes it at once)' }),
  RESULT_STORAGE_BYTES: Type.Integer({ minimum: 1, maximum: 1099511627776, default: 1073741824, description: 'a file:// result store keeps at most this many bytes, removing the oldest entries first (buckets: use a lifecycle rule)' }),
  FORMAT_QUALITY: Type.String({ default: 'jpeg=80,webp=79,avif=63', description: 'default quality of GET URL replies per format, as imgproxy\'s IMGPROXY_FORMAT_QUALITY (1-100 each; a format not named: 80)' }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 3600000, default: 900000, description: 'a whole request (headers and body) must arrive within this time' }),
  JOBS_QUEUE: Type.String({ default: '', pattern: '^(|postgres(ql)?://.+)$', description: 'asynchronous jobs (POST /api/jobs): empty, the embedded queue (PGlite in JOBS_DATA_DIR, one replica); a postgres:// URL, the PostgreSQL database whose queue the replicas share' }),
  JOBS_DATA_DIR: Type.String({ minLength: 1, default: 'data/jobs', description: 'the embedded queue\'s database folder (with JOBS_QUEUE empty); it outlives restarts: queued jobs resume' }),
  JOB_CONCURRENCY: Type.Integer({ minimum: 0, maximum: 64, default: 1, description: 'asynchronous jobs this replica runs at once, each only on pool capacity that requests leave (0: it runs none, only takes them)' }),
  JOB_LEASE_SECONDS: Type.Integer({ minimum: 10, maximum: 3600, default: 30, description: 'a running job whose replica has not renewed its lease for this long (killed, cut off) is run again by another replica' }),
  JOBS_DESTINATION_ROOT: Type.String({ default: '', description: 'file:///dir destinations of jobs must be inside this folder (empty: file:// destinations are off)' }),
  WEBHOOK_SIGNING_KEYS: Type.String({ default: '', description: 'comma-separated keys that sign job webhooks (HMAC-SHA256 over timestamp.body, one v1= per key, for rotation); empty: jobs with a webhook are refused' })
})

type Env = Static<typeof CONFIG_SCHEMA>

export interface Config {
  readonly port: number
  readonly host: string
  /** 0: /metrics is served on `port`. */
  readonly metricsPort: number
  readonly metricsHost: string
  readonly apiKeys: readonly string[]
  readonly apiKeyGenerated: boolean
  readonly logLevel: string
  readonly executionMode: 'pool' | 'inline'
  readonly clusterWorkers: number
  readonly poolThreads: number
  readonly workerNiceness: number
  readonly maxSourceBytes: number
  readonly maxRangeBytes: number
  readonly maxRangeRequests: number
  readonly rangeReadMinBytes: number
  readonly maxInputPixels: number
  readonly maxVideoSeconds: number
  readonly maxAnimationFrames: number
  readonly maxQueueWaitMs: number
  readonly pressureMaxEventLoopDelayMs: number
  readonly pressureMaxRssBytes: number
  readonly jobTimeoutMs: number
  readonly memorySpoolBytes: number
  readonly allowedSources: readonly string[]
  readonly fetchTimeoutMs: number
  readonly maxConcurrentFetches: number
  readonly fetchMinBytesPerSecond: number
  readonly allowPrivateSources: boolean
  /** Sources in stores (s3://, gs://, abs://, local://): the schemes switched on, and their settings. */
  readonly stores: StoreSettings
  readonly ffmpegPath: string
  readonly ffprobePath: string
  readonly ffmpegZygote: 'auto' | 'off'
  readonly jpegDecoder: 'turbojpeg' | 'sandbox' | 'sharp'
  readonly jpegShrink: 'auto' | 'quality' | 'imgproxy'
  /** IMAGE_DECODER: sandbox decodes still images in the decoder sandbox (src/jobs/settings.ts says which). */
  readonly imageDecoder: 'in-process' | 'sandbox'
  /**
   * What ffmpeg/ffprobe see of this process's environment, whichever helper starts them: the search path and
   * the dynamic loader's settings (a preloaded allocator, a custom ffmpeg's libraries), not the server's secrets.
   */
  readonly toolEnv: Readonly<Record<string, string>>
  readonly tmpDir: string
  readonly shutdownGraceMs: number
  readonly headersTimeoutMs: number
  readonly keepAliveTimeoutMs: number
  readonly minBodyBytesPerSecond: number
  readonly requestTimeoutMs: number
  /** Signed GET URLs: key and salt pairs, as bytes. */
  readonly urlSigning: readonly SigningKey[]
  readonly allowUnsignedUrls: boolean
  readonly urlPresets: Readonly<Record<string, string>>
  readonly urlCacheMaxAgeSeconds: number
  readonly resultCacheBytes: number
  readonly resultCacheSeconds: number
  /** undefined: no result store. */
  readonly resultStorage: ResultStorage | undefined
  readonly resultStorageSeconds: number
  readonly resultStorageBytes: number
  readonly formatQuality: Readonly<Record<'jpeg' | 'webp' | 'avif', number>>
  /** '' for the embedded queue, else the PostgreSQL URL the replicas share. */
  readonly jobsQueue: string
  readonly jobsDataDir: string
  readonly jobConcurrency: number
  readonly jobLeaseSeconds: number
  readonly jobsDestinationRoot: string
  readonly webhookSigningKeys: readonly string[]
}

/** The variables of this process's environment that the tools keep (Config.toolEnv). */
const TOOL_ENV = ['PATH', 'LD_LIBRARY_PATH', 'LD_PRELOAD'] as const

export function loadConfig (env: Record<string, string | undefined> = process.env): Config {
  let parsed: Env
  try {
    // Only our variables are handed to the validator: env-schema drops unknown keys, and PATH & co. are none of its business.
    const ours = Object.fromEntries(Object.keys(CONFIG_SCHEMA.properties).filter(k => env[k] !== undefined).map(k => [k, env[k]]))
    parsed = envSchema<Env>({ schema: structuredClone(CONFIG_SCHEMA), data: ours, env: false })
  } catch (err) {
    throw new ConfigError(describe(err, env))
  }
  try {
    parseAllowedSources(list(parsed.ALLOWED_SOURCES))
  } catch (err) {
    throw new ConfigError((err as Error).message)
  }
  const apiKeys = list(parsed.API_KEYS)
  const apiKeyGenerated = apiKeys.length === 0
  if (apiKeyGenerated) apiKeys.push(randomBytes(24).toString('base64url'))
  return Object.freeze({
    port: parsed.PORT,
    host: parsed.HOST,
    metricsPort: parsed.METRICS_PORT,
    metricsHost: parsed.METRICS_HOST === '' ? parsed.HOST : parsed.METRICS_HOST,
    apiKeys: Object.freeze(apiKeys),
    apiKeyGenerated,
    logLevel: parsed.LOG_LEVEL,
    executionMode: parsed.EXECUTION_MODE,
    clusterWorkers: parsed.CLUSTER_WORKERS,
    poolThreads: parsed.POOL_THREADS || availableParallelism(),
    workerNiceness: parsed.WORKER_NICENESS,
    maxSourceBytes: parsed.MAX_SOURCE_BYTES,
    maxRangeBytes: parsed.MAX_RANGE_BYTES,
    maxRangeRequests: parsed.MAX_RANGE_REQUESTS,
    rangeReadMinBytes: parsed.RANGE_READ_MIN_BYTES,
    maxInputPixels: parsed.MAX_INPUT_PIXELS,
    maxVideoSeconds: parsed.MAX_VIDEO_SECONDS,
    maxAnimationFrames: parsed.MAX_ANIMATION_FRAMES,
    maxQueueWaitMs: parsed.MAX_QUEUE_WAIT_MS,
    pressureMaxEventLoopDelayMs: parsed.PRESSURE_MAX_EVENT_LOOP_DELAY_MS,
    pressureMaxRssBytes: parsed.PRESSURE_MAX_RSS_BYTES,
    jobTimeoutMs: parsed.JOB_TIMEOUT_MS,
    memorySpoolBytes: parsed.MEMORY_SPOOL_BYTES,
    allowedSources: Object.freeze(list(parsed.ALLOWED_SOURCES)),
    fetchTimeoutMs: parsed.FETCH_TIMEOUT_MS,
    maxConcurrentFetches: parsed.MAX_CONCURRENT_FETCHES,
    fetchMinBytesPerSecond: parsed.FETCH_MIN_BYTES_PER_SECOND,
    allowPrivateSources: parsed.ALLOW_PRIVATE_SOURCES,
    stores: storeSettings(parsed),
    ffmpegPath: parsed.FFMPEG_PATH,
    ffprobePath: parsed.FFPROBE_PATH,
    ffmpegZygote: parsed.FFMPEG_ZYGOTE,
    jpegDecoder: parsed.JPEG_DECODER,
    jpegShrink: parsed.JPEG_SHRINK,
    imageDecoder: parsed.IMAGE_DECODER,
    toolEnv: Object.freeze(Object.fromEntries(TOOL_ENV.flatMap(name => env[name] === undefined ? [] : [[name, env[name]]]))),
    tmpDir: parsed.TMP_DIR || tmpdir(),
    shutdownGraceMs: parsed.SHUTDOWN_GRACE_MS,
    headersTimeoutMs: parsed.HEADERS_TIMEOUT_MS,
    keepAliveTimeoutMs: parsed.KEEP_ALIVE_TIMEOUT_MS,
    minBodyBytesPerSecond: parsed.MIN_BODY_BYTES_PER_SECOND,
    requestTimeoutMs: parsed.REQUEST_TIMEOUT_MS,
    urlSigning: Object.freeze(signingKeys(list(parsed.URL_SIGNING_KEYS), list(parsed.URL_SIGNING_SALTS))),
    allowUnsignedUrls: parsed.ALLOW_UNSIGNED_URLS,
    urlPresets: Object.freeze(presets(parsed.URL_PRESETS)),
    urlCacheMaxAgeSeconds: parsed.URL_CACHE_MAX_AGE_SECONDS,
    resultCacheBytes: parsed.RESULT_CACHE_BYTES,
    resultCacheSeconds: parsed.RESULT_CACHE_SECONDS,
    resultStorage: resultStorage(parsed),
    resultStorageSeconds: parsed.RESULT_STORAGE_SECONDS,
    resultStorageBytes: parsed.RESULT_STORAGE_BYTES,
    formatQuality: Object.freeze(formatQuality(parsed.FORMAT_QUALITY)),
    jobsQueue: parsed.JOBS_QUEUE,
    jobsDataDir: parsed.JOBS_DATA_DIR,
    jobConcurrency: parsed.JOB_CONCURRENCY,
    jobLeaseSeconds: parsed.JOB_LEASE_SECONDS,
    jobsDestinationRoot: parsed.JOBS_DESTINATION_ROOT,
    webhookSigningKeys: Object.freeze(list(parsed.WEBHOOK_SIGNING_KEYS))
  })
}

/** RESULT_STORAGE: a bucket is reached with its scheme's connection settings (stores.ts), whether sources may name it or not. */
function resultStorage (env: Env): ResultStorage | undefined {
  let storage: ResultStorage | undefined
  try {
    storage = parseResultStorage(env.RESULT_STORAGE)
  } catch (err) {
    throw new ConfigError((err as Error).message)
  }
  if (storage?.kind === 'bucket' && storage.scheme === 'abs' && env.ABS_NAME === '') throw new ConfigError(`RESULT_STORAGE=${env.RESULT_STORAGE} needs ABS_NAME, the storage account`)
  return storage === undefined ? undefined : Object.freeze(storage)
}

/**
 * libuv's threadpool serves sharp's async work for every worker thread, plus fs and DNS. Its default of 4
 * would queue sharp calls once the pool runs more pipelines than that (up to JOBS_PER_THREAD per thread,
 * see src/jobs/pairing.ts), and a URL's DNS lookup or a temp file write would wait behind whole pipelines;
 * so it is sized from the pool unless the operator set it. It must be set before the threadpool first
 * runs: server.ts calls this before building.
 */
export function applyRuntimeDefaults (config: Config, env: Record<string, string | undefined> = process.env): void {
  env.UV_THREADPOOL_SIZE ??= String(Math.max(4, config.poolThreads * JOBS_PER_THREAD + 2))
}

/** Development switches that lower a guard: each is worth one warning at start, naming the variable. */
export function unsafeSettings (config: Config): string[] {
  const warnings: string[] = []
  if (config.allowUnsignedUrls) warnings.push('ALLOW_UNSIGNED_URLS=true: GET URLs signed "insecure" are served, so anyone can make this server fetch and process any URL it may reach; for development only')
  if (config.allowPrivateSources) warnings.push('ALLOW_PRIVATE_SOURCES=true: URL sources may reach loopback and private networks (this host, its cloud metadata, internal services); for tests and closed networks only')
  return warnings
}

/** One line naming the variable and what it takes, e.g. 'PORT must be an integer from 0 to 65535 (got "70000")'. */
function describe (err: unknown, env: Record<string, string | undefined>): string {
  const errors = (err as { errors?: SchemaError[] }).errors
  if (errors === undefined) return (err as Error).message
  const properties: Record<string, object> = CONFIG_SCHEMA.properties
  return describeSchemaErrors(errors, { noun: 'variable', schemaOf: name => properties[name], valueOf: name => env[name] })
}
