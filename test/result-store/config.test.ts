// RESULT_STORAGE, RESULT_STORAGE_SECONDS and RESULT_STORAGE_BYTES as src/config.ts reads them: a directory or a
// bucket prefix, with the bucket's scheme settings switched on for the result store alone; a bad value stops
// the start with one line naming the variable.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ConfigError, loadConfig } from '../../src/config.ts'

test('a directory, or a bucket prefix reached with its scheme\'s settings while its sources stay off', () => {
  assert.equal(loadConfig({}).resultStorage, undefined)
  assert.deepEqual(loadConfig({ RESULT_STORAGE: 'file:///var/cache/thumbd/' }).resultStorage, { kind: 'directory', path: '/var/cache/thumbd' })
  const config = loadConfig({ RESULT_STORAGE: 's3://thumbs/results/v1/', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_FORCE_PATH_STYLE: 'true' })
  assert.deepEqual(config.resultStorage, { kind: 'bucket', scheme: 's3', bucket: 'thumbs', prefix: 'results/v1/' })
  assert.equal(config.stores.s3.endpoint, 'http://127.0.0.1:9000')
  assert.ok(!config.stores.sources.includes('s3'), 's3:// sources stay off')
  assert.deepEqual(loadConfig({ RESULT_STORAGE: 'gs://thumbs' }).resultStorage, { kind: 'bucket', scheme: 'gs', bucket: 'thumbs', prefix: '' })
})

test('a bad value is one line naming RESULT_STORAGE*', () => {
  for (const [env, pattern] of [
    [{ RESULT_STORAGE: '/var/cache/thumbd' }, /^RESULT_STORAGE "\/var\/cache\/thumbd" is not a result store/],
    [{ RESULT_STORAGE: 'file://relative/dir' }, /^RESULT_STORAGE "file:\/\/relative\/dir" is not a file URL/],
    [{ RESULT_STORAGE: 'file:///' }, /^RESULT_STORAGE "file:\/\/\/" must name a directory of its own/],
    [{ RESULT_STORAGE: 's3://A_B/x' }, /^RESULT_STORAGE "s3:\/\/A_B\/x": "A_B" is not a bucket/],
    [{ RESULT_STORAGE: 'abs://thumbs' }, /^RESULT_STORAGE=abs:\/\/thumbs needs ABS_NAME/],
    [{ RESULT_STORAGE_SECONDS: '0' }, /RESULT_STORAGE_SECONDS/],
    [{ RESULT_STORAGE_BYTES: '0' }, /RESULT_STORAGE_BYTES/],
    [{ RESULT_STORAGE_SECONDS: '31536001' }, /RESULT_STORAGE_SECONDS/]
  ] as const) {
    assert.throws(() => loadConfig(env), (err: Error) => err instanceof ConfigError && pattern.test(err.message) && !err.message.includes('\n'), JSON.stringify(env))
  }
})
