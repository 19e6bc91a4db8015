// A job whose source and destination are in a bucket: s3:// against versitygw (the S3-compatible server of the
// store tests, test/stores/servers.ts), through the stores of src/stores/ and their settings (USE_S3 and the
// bucket lists apply to destinations as to sources).
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import sharp from 'sharp'
import { media } from '../media.ts'
import { missing, S3_ACCESS, S3_SECRET, serverBinary, startVersitygw } from '../stores/servers.ts'
import { buildJobsApp, jobsEnv, settled, submit } from './jobs-helper.ts'

// The SDK's default chain reads these (the product takes no S3 key of its own); never the instance metadata service.
Object.assign(process.env, { AWS_ACCESS_KEY_ID: S3_ACCESS, AWS_SECRET_ACCESS_KEY: S3_SECRET, AWS_EC2_METADATA_DISABLED: 'true', AWS_REGION: 'us-east-1' })

test('a photo read from a bucket, its variant and hashes written under a bucket prefix, manifest last; a bucket not allowed is refused', { skip: missing(serverBinary('versitygw')) ?? false }, async (t) => {
  const server = await startVersitygw(t)
  t.after(() => server.close())
  const endpoint = `http://127.0.0.1:${server.port}`
  const client = new S3Client({ endpoint, forcePathStyle: true })
  t.after(() => client.destroy())
  await client.send(new CreateBucketCommand({ Bucket: 'media' }))
  const photo = await media('jpeg')
  await client.send(new PutObjectCommand({ Bucket: 'media', Key: 'in/p.jpg', Body: photo }))
  const { env } = await jobsEnv(t, {}, { USE_S3: 'true', S3_ENDPOINT: endpoint, S3_FORCE_PATH_STYLE: 'true', S3_ALLOWED_BUCKETS: 'media' })
  const app = await buildJobsApp(t, env)

  const refused = await submit(app, { source: { url: 's3://media/in/p.jpg' }, destination: 's3://other/out', outputs: [{ kind: 'info' }] })
  assert.equal(refused.statusCode, 400)
  assert.equal(refused.json().code, 'THUMBD_SOURCE_FORBIDDEN')

  const res = await submit(app, { source: { url: 's3://media/in/p.jpg' }, destination: 's3://media/out/p1/', outputs: [{ kind: 'variant', width: 80, format: 'webp' }, { kind: 'hashes', perceptual: false }] })
  assert.equal(res.statusCode, 202, res.body)
  const done = await settled(app, res.json().id)
  assert.equal(done.state, 'done', JSON.stringify(done))
  const listed = await client.send(new ListObjectsV2Command({ Bucket: 'media', Prefix: 'out/p1/' }))
  assert.deepEqual(listed.Contents?.map(o => o.Key).sort(), ['out/p1/hashes.json', 'out/p1/manifest.json', 'out/p1/variant.webp'])
  const variant = done.outputs[0].files[0]
  assert.equal(variant.location, 's3://media/out/p1/variant.webp')
  const object = await client.send(new GetObjectCommand({ Bucket: 'media', Key: 'out/p1/variant.webp' }))
  const bytes = Buffer.from(await object.Body!.transformToByteArray())
  assert.equal(bytes.length, variant.size)
  assert.equal(object.ETag, variant.etag)
  assert.equal((await sharp(bytes).metadata()).width, 80)
  const hashes = JSON.parse(Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: 'media', Key: 'out/p1/hashes.json' }))).Body!.transformToByteArray()).toString())
  assert.equal(hashes.digests.sha256, createHash('sha256').update(photo).digest('hex'))
})
