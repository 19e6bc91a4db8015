// How store URLs are spelled (src/stores/location.ts) and which settings turn each scheme on (src/config-values.ts).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadConfig } from '../../src/config.ts'
import { parseStoreUrl, storeUrl } from '../../src/stores/location.ts'
import { createStores } from '../../src/stores/registry.ts'

test('the key is the path after the bucket, percent-decoded once; ?versionId= the one query', () => {
  assert.deepEqual(parseStoreUrl('s3://my-bucket/a/b.jpg'), { scheme: 's3', bucket: 'my-bucket', key: 'a/b.jpg' })
  assert.deepEqual(parseStoreUrl('s3://b/k.jpg?versionId=3%2Fx'), { scheme: 's3', bucket: 'b', key: 'k.jpg', versionId: '3/x' })
  assert.deepEqual(parseStoreUrl('gs://b/100%25%20%23%3F%2Bsure%C3%A9.png'), { scheme: 'gs', bucket: 'b', key: '100% #?+sureé.png' })
  assert.deepEqual(parseStoreUrl('abs://c/dir//x y.jpg'), { scheme: 'abs', bucket: 'c', key: 'dir//x y.jpg' })
  assert.deepEqual(parseStoreUrl('local:///photos/é.jpg'), { scheme: 'local', bucket: '', key: 'photos/é.jpg' })
  // Round trip through the canonical spelling, for every odd key.
  for (const key of ['100% #?+sure.png', 'ünï/cödé/日本.jpg', 'a//b', '...', 'x?versionId=1']) {
    const location = { scheme: 's3' as const, bucket: 'b', key }
    assert.deepEqual(parseStoreUrl(storeUrl(location)), location)
    assert.deepEqual(parseStoreUrl(new URL(storeUrl(location)).href), location, 'and through WHATWG URL')
  }
})

test('malformed store URLs are 400s; dot segments are refused, never resolved into another key', () => {
  for (const bad of ['s3://', 's3://b', 's3://b/', 's3:b/k', 'local://host/x', 's3://b/k?x=1', 'gs://b/k?versionId=1', 's3://b/%zz', 's3://b/k#frag']) {
    assert.throws(() => parseStoreUrl(bad), { code: 'THUMBD_BAD_OPTIONS' }, bad)
  }
  for (const dots of ['s3://b/a/../k', 's3://b/./k', 's3://b/a/%2e%2e/k', 'local:///../etc/passwd', 'local:///a/..']) {
    assert.throws(() => parseStoreUrl(dots), { code: 'THUMBD_SOURCE_FORBIDDEN' }, dots)
  }
})

test('each scheme is off until configured, and its refusal names the setting; bucket lists apply', async () => {
  const stores = createStores(loadConfig({}).stores)
  for (const [url, setting] of [['s3://b/k', 'USE_S3'], ['gs://b/k', 'USE_GCS'], ['abs://c/k', 'USE_ABS'], ['local:///k', 'LOCAL_FILESYSTEM_ROOT']]) {
    await assert.rejects(stores.storeFor(parseStoreUrl(url!)), (err: Error & { code: string }) => err.code === 'THUMBD_SOURCE_FORBIDDEN' && err.message.includes(setting!), url)
  }
  const listed = createStores(loadConfig({ USE_S3: 'true', S3_ALLOWED_BUCKETS: 'a,b', S3_DENIED_BUCKETS: 'b', USE_GCS: 'true', GCS_DENIED_BUCKETS: 'x', USE_ABS: 'true', ABS_NAME: 'acct', ABS_ALLOWED_CONTAINERS: 'ok' }).stores)
  for (const [url, setting] of [['s3://c/k', 'S3_ALLOWED_BUCKETS'], ['s3://b/k', 'S3_DENIED_BUCKETS'], ['gs://x/k', 'GCS_DENIED_BUCKETS'], ['abs://no/k', 'ABS_ALLOWED_CONTAINERS']]) {
    await assert.rejects(listed.storeFor(parseStoreUrl(url!)), (err: Error & { code: string }) => err.code === 'THUMBD_SOURCE_FORBIDDEN' && err.message.includes(setting!), url)
  }
})

test('the result store and job outputs take a store by scheme, off for sources or not; one store per scheme', async () => {
  const stores = createStores(loadConfig({ S3_ENDPOINT: 'http://127.0.0.1:9', S3_FORCE_PATH_STYLE: 'true' }).stores)
  const s3 = await stores.store('s3')
  assert.equal(s3.scheme, 's3')
  assert.equal(await stores.store('s3'), s3, 'made once')
  await assert.rejects(stores.storeFor(parseStoreUrl('s3://b/k')), { code: 'THUMBD_SOURCE_FORBIDDEN' }, 'still off for sources')
  await assert.rejects(stores.store('abs'), /ABS_NAME/)
  await assert.rejects(stores.store('local'), /LOCAL_FILESYSTEM_ROOT/)
  await stores.close()
})

test('store settings are checked at start, one line naming the variable, never echoing a key', () => {
  assert.throws(() => loadConfig({ USE_ABS: 'true' }), /USE_ABS=true needs ABS_NAME/)
  assert.throws(() => loadConfig({ S3_ENDPOINT: 'ftp://x' }), /^ConfigError: S3_ENDPOINT must be an http\(s\) URL/)
  assert.throws(() => loadConfig({ LOCAL_FILESYSTEM_ROOT: 'relative/dir' }), /LOCAL_FILESYSTEM_ROOT must be an absolute path/)
  assert.throws(() => loadConfig({ GCS_KEY: '{"private_key":"SECRET-VALUE"}' }), (err: Error) => /GCS_KEY must be/.test(err.message) && !err.message.includes('SECRET'))
  const config = loadConfig({ USE_S3: 'true', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_FORCE_PATH_STYLE: 'true', LOCAL_FILESYSTEM_ROOT: '/srv/media' })
  assert.deepEqual(config.stores.s3, { endpoint: 'http://127.0.0.1:9000', region: undefined, forcePathStyle: true, allowed: [], denied: [] })
  assert.deepEqual(config.stores.local, { root: '/srv/media' })
  assert.deepEqual(config.stores.sources, ['s3', 'local'])
  // gs is off for sources, its settings there all the same (for the result store, job outputs).
  assert.deepEqual(config.stores.gs, { endpoint: undefined, key: undefined, allowed: [], denied: [] })
  assert.ok(Object.isFrozen(config.stores) && Object.isFrozen(config.stores.s3))
})
