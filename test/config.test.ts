import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { applyRuntimeDefaults, ConfigError, loadConfig } from '../src/config.ts'
import { CONFIG_SCHEMA } from '../src/config-schema.ts'

test('defaults: port 3000, pool mode, a generated key; the result is frozen', () => {
  const config = loadConfig({})
  assert.equal(config.port, 3000)
  assert.equal(config.host, '0.0.0.0')
  assert.equal(config.executionMode, 'pool')
  assert.equal(config.allowPrivateSources, false)
  assert.equal(config.apiKeyGenerated, true)
  assert.equal(config.apiKeys.length, 1)
  assert.ok(config.apiKeys[0]!.length >= 32)
  assert.notEqual(loadConfig({}).apiKeys[0], config.apiKeys[0], 'a new key each start')
  assert.ok(Object.isFrozen(config))
  assert.ok(config.poolThreads >= 1)
})

test('every duration, size and count has a documented maximum', () => {
  for (const [name, schema] of Object.entries(CONFIG_SCHEMA.properties as Record<string, { type?: string, maximum?: number }>)) {
    if (schema.type !== 'integer' && schema.type !== 'number') continue
    assert.equal(typeof schema.maximum, 'number', `${name} has a maximum`)
    // Durations must stay timer-safe.
    if (name.endsWith('_MS')) assert.ok(schema.maximum! < 2 ** 31, name)
  }
})

test('values are parsed and several keys live at once', () => {
  const config = loadConfig({ PORT: '8080', API_KEYS: 'one, two,,three', ALLOW_PRIVATE_SOURCES: 'true', EXECUTION_MODE: 'inline', POOL_THREADS: '3' })
  assert.equal(config.port, 8080)
  assert.deepEqual(config.apiKeys, ['one', 'two', 'three'])
  assert.equal(config.apiKeyGenerated, false)
  assert.equal(config.allowPrivateSources, true)
  assert.equal(config.executionMode, 'inline')
  assert.equal(config.poolThreads, 3)
})

test('invalid config: one clear line naming the variable', () => {
  for (const [env, name] of [
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: 'abc' }, 'PORT'],
    [{ EXECUTION_MODE: 'threads' }, 'EXECUTION_MODE'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ ALLOW_PRIVATE_SOURCES: 'maybe' }, 'ALLOW_PRIVATE_SOURCES'],
    [{ JOB_TIMEOUT_MS: '5' }, 'JOB_TIMEOUT_MS'],
    [{ MAX_SOURCE_BYTES: '0' }, 'MAX_SOURCE_BYTES'],
    // Past setTimeout's 2^31 - 1 ms it would fire at once: every job an instant 504.
    [{ JOB_TIMEOUT_MS: '2147483648' }, 'JOB_TIMEOUT_MS'],
    [{ SHUTDOWN_GRACE_MS: '99999999999' }, 'SHUTDOWN_GRACE_MS']
  ] as const) {
    assert.throws(() => loadConfig(env), (err: Error) => {
      assert.ok(err instanceof ConfigError)
      assert.ok(err.message.startsWith(`${name} `), err.message)
      assert.ok(!err.message.includes('\n'))
      return true
    })
  }
})

test('invalid config says what the variable accepts, not the validator\'s words', () => {
  for (const [env, pieces] of [
    [{ FFMPEG_ZYGOTE: 'on' }, ['FFMPEG_ZYGOTE', 'auto, off', '"on"']],
    [{ PORT: '70000' }, ['PORT', 'from 0 to 65535', '"70000"']],
    [{ LOG_LEVEL: 'loud' }, ['LOG_LEVEL', 'fatal, error, warn, info, debug, trace, silent']],
    [{ ALLOW_UNSIGNED_URLS: 'yes' }, ['ALLOW_UNSIGNED_URLS', 'true or false']],
    [{ WORKER_NICENESS: '20' }, ['WORKER_NICENESS', 'from 0 to 19']],
    [{ MAX_VIDEO_SECONDS: '0' }, ['MAX_VIDEO_SECONDS', 'above 0']]
  ] as const) {
    assert.throws(() => loadConfig(env), (err: Error) => {
      for (const piece of pieces) assert.ok(err.message.includes(piece), `"${piece}" in: ${err.message}`)
      assert.doesNotMatch(err.message, /constant|allowed values/)
      return true
    })
  }
})

test('a store endpoint refused for its credentials is not echoed: neither user info nor a SAS signature reaches the log', () => {
  for (const [env, name, secrets] of [
    [{ S3_ENDPOINT: 'http://AKIAEXAMPLE:TopSecretPassw0rd@minio.internal:9000' }, 'S3_ENDPOINT', ['AKIAEXAMPLE', 'TopSecretPassw0rd']],
    [{ GCS_ENDPOINT: 'https://user:GcsP4ss@gcs.internal' }, 'GCS_ENDPOINT', ['GcsP4ss', 'user:']],
    [{ ABS_ENDPOINT: 'ftp://acct.blob.core.windows.net/?sv=2024-01-01&sig=SASSECRETSIG' }, 'ABS_ENDPOINT', ['SASSECRETSIG', 'sig=']],
    [{ S3_ENDPOINT: 'AKIAEXAMPLE:TopSecretPassw0rd@minio.internal' }, 'S3_ENDPOINT', ['AKIAEXAMPLE', 'TopSecretPassw0rd']]
  ] as const) {
    assert.throws(() => loadConfig(env), (err: Error) => {
      assert.ok(err instanceof ConfigError)
      assert.ok(err.message.startsWith(`${name} must be an http(s) URL`), err.message)
      for (const secret of secrets) assert.ok(!err.message.includes(secret), `${secret} echoed in: ${err.message}`)
      return true
    })
  }
  // Where the value was a URL, its scheme and host say which one it was.
  assert.throws(() => loadConfig({ S3_ENDPOINT: 'http://AKIAEXAMPLE:TopSecretPassw0rd@minio.internal:9000' }), /got http:\/\/minio\.internal:9000/)
})

test('S3_FORCE_PATH_STYLE defaults to path style with S3_ENDPOINT (as imgproxy), virtual-hosted for AWS; either can be set', () => {
  // Virtual-hosted style against a path-style-only server reads s3://media/secret/x as bucket "secret".
  assert.equal(loadConfig({ S3_ENDPOINT: 'http://127.0.0.1:9000' }).stores.s3.forcePathStyle, true)
  assert.equal(loadConfig({}).stores.s3.forcePathStyle, false)
  assert.equal(loadConfig({ S3_ENDPOINT: 'http://127.0.0.1:9000', S3_FORCE_PATH_STYLE: 'false' }).stores.s3.forcePathStyle, false)
  assert.equal(loadConfig({ S3_FORCE_PATH_STYLE: 'true' }).stores.s3.forcePathStyle, true)
  assert.throws(() => loadConfig({ S3_FORCE_PATH_STYLE: 'yes' }), /S3_FORCE_PATH_STYLE/)
})

test('ABS_KEY empty is described as what the code does (DefaultAzureCredential), not as anonymous access', () => {
  const described = (CONFIG_SCHEMA.properties as Record<string, { description?: string }>).ABS_KEY!.description!
  const readme = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8')
  const example = readFileSync(new URL('../.env.example', import.meta.url), 'utf8')
  assert.match(readFileSync(new URL('../src/stores/abs/abs-store.ts', import.meta.url), 'utf8'), /DefaultAzureCredential\(\)/, 'the code still uses it')
  for (const [where, text] of [['schema', described], ['docs/configuration.md', /^\| `ABS_KEY`.*$/m.exec(readme)![0]], ['.env.example', /^# abs:\/\/[^]*?ABS_ENDPOINT/m.exec(example)![0]]] as const) {
    assert.match(text, /DefaultAzureCredential/, where)
    assert.doesNotMatch(text, /anonymous/, where)
  }
})

test('.env.example lists every variable of the schema, with its default', () => {
  const example = readFileSync(new URL('../.env.example', import.meta.url), 'utf8')
  const listed = new Map([...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=(.*)$/gm)].map(m => [m[1], m[2]]))
  const properties = CONFIG_SCHEMA.properties as Record<string, { default?: unknown }>
  assert.deepEqual([...listed.keys()].sort(), Object.keys(properties).sort())
  for (const [name, schema] of Object.entries(properties)) {
    assert.equal(listed.get(name), String(schema.default), name)
  }
})

test('libuv\'s threadpool has room for every pipeline the pool runs, plus fs and DNS, unless the operator sized it', () => {
  const env: Record<string, string | undefined> = {}
  applyRuntimeDefaults(loadConfig({ POOL_THREADS: '2' }), env)
  assert.equal(env.UV_THREADPOOL_SIZE, '6', '2 threads x 2 small images + 2')
  const set: Record<string, string | undefined> = { UV_THREADPOOL_SIZE: '3' }
  applyRuntimeDefaults(loadConfig({ POOL_THREADS: '8' }), set)
  assert.equal(set.UV_THREADPOOL_SIZE, '3')
})

test('the tools keep only the search path and the dynamic loader\'s settings of the environment, no secret', () => {
  const config = loadConfig({ PATH: '/usr/bin', LD_PRELOAD: '/usr/lib/libjemalloc.so.2', API_KEYS: 'secret', HOME: '/root' })
  assert.deepEqual(config.toolEnv, { PATH: '/usr/bin', LD_PRELOAD: '/usr/lib/libjemalloc.so.2' })
})
