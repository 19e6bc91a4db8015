// A result store in a bucket prefix (RESULT_STORAGE=s3://bucket/prefix) on a real S3-compatible server
// (versitygw, from scripts/install-test-servers.sh), through the s3 store of src/stores/: two replicas share
// it; the entry is one object under the prefix, in hash-prefixed folders; a store that refuses connections
// fails no request.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'
import { missing, S3_ACCESS, S3_SECRET, serverBinary, startVersitygw } from '../stores/servers.ts'
import { jobs, photoOrigin, reads, replica, sign, written } from './store-helpers.ts'

// The SDK's default chain reads these (thumbd takes no S3 key of its own); never the instance metadata service.
Object.assign(process.env, { AWS_ACCESS_KEY_ID: S3_ACCESS, AWS_SECRET_ACCESS_KEY: S3_SECRET, AWS_EC2_METADATA_DISABLED: 'true', AWS_REGION: 'us-east-1' })

async function versitygw (): Promise<string> {
  const server = await startVersitygw({ after })
  after(() => server.close())
  const endpoint = `http://127.0.0.1:${server.port}`
  const client = new S3Client({ endpoint, forcePathStyle: true })
  await client.send(new CreateBucketCommand({ Bucket: 'results' }))
  client.destroy()
  return endpoint
}

const absent = missing(serverBinary('versitygw'))
const endpoint = absent === undefined ? await versitygw() : ''

test('s3: a result one replica made answers on another from the bucket, without a fetch or a job', { skip: absent }, async (t) => {
  const origin = await photoOrigin(t)
  // s3:// sources off (no USE_S3), and a bucket list that names another bucket: neither guards the result store.
  const env = { S3_ENDPOINT: endpoint, S3_FORCE_PATH_STYLE: 'true', S3_ALLOWED_BUCKETS: 'media' }
  const one = await replica(t, origin.base, 's3://results/thumbs', env)
  const two = await replica(t, origin.base, 's3://results/thumbs', env)
  const url = sign(`/rs:fill:200:200/plain/${origin.base}/a.jpg@avif`)
  const miss = await one.inject({ url })
  assert.equal(miss.statusCode, 200, miss.body)
  await written(one, 1)
  const hit = await two.inject({ url })
  assert.equal(hit.statusCode, 200, hit.body)
  assert.equal(origin.hits.length, 1)
  assert.equal(await jobs(two), 0)
  assert.equal(await reads(two, 'hit'), 1)
  for (const name of ['etag', 'content-type', 'cache-control', 'content-length']) assert.equal(hit.headers[name], miss.headers[name], name)
  assert.ok(hit.rawPayload.equals(miss.rawPayload))
  assert.match(String(hit.headers['server-timing']), /^result;desc="s3";dur=/)
  const client = new S3Client({ endpoint, forcePathStyle: true })
  t.after(() => client.destroy())
  const listed = await client.send(new ListObjectsV2Command({ Bucket: 'results' }))
  assert.equal(listed.Contents?.length, 1)
  assert.match(listed.Contents[0]!.Key!, /^thumbs\/([0-9a-f]{2})\/([0-9a-f]{2})\/\1\2[0-9a-f]{60}$/)
})

test('s3: a result store that refuses connections: GETs still 200, each failure counted', async (t) => {
  const origin = await photoOrigin(t)
  // A port nothing listens on (the origin's, closed at once, would race; port 9 is discard, closed on loopback).
  const app = await replica(t, origin.base, 's3://results/thumbs', { S3_ENDPOINT: 'http://127.0.0.1:9', S3_FORCE_PATH_STYLE: 'true' })
  for (let n = 0; n < 2; n++) {
    const res = await app.inject({ url: sign(`/w:90/plain/${origin.base}/${n}.jpg@webp`) })
    assert.equal(res.statusCode, 200, res.body)
  }
  await written(app, 2, 'error')
  assert.equal(await reads(app, 'error') + await reads(app, 'timeout'), 2)
  assert.equal(await jobs(app), 2)
})
