// Config is read here and only here: validated once against one schema (src/config-schema.ts), then frozen.
// The variables whose text holds several values are read by src/config-values.ts.
import { randomBytes } from 'node:crypto'
import { availableParallelism, tmpdir } from 'node:os'
import { envSchema } from 'env-schema'
import type { Static } from 'typebox'
import { JOBS_PER_THREAD } from './jobs/pairing.ts'
import { describeSchemaErrors, type SchemaError } from './schema-errors.ts'
import { CONFIG_SCHEMA } from './config-schema.ts'
import { ConfigError, formatQuality, list, presets, signingKeys, storeSettings } from './config-values.ts'
import type { SigningKey } from './signed-urls/signature.ts'
import type { StoreSettings } from './stores/settings.ts'
import { parseAllowedSources } from './sources/url-policy.ts'
import { parseResultStorage, type ResultStorage } from './result-store/location.ts'

export { ConfigError }

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
