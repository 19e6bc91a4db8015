// s3:// against versitygw (an S3-compatible gateway, path style), started once for this file, through the shared
// suite; then what only S3 has: ?versionId=.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { CreateBucketCommand, DeleteObjectCommand, PutBucketVersioningCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { AUTH, build } from '../helper.ts'
import { createS3Store } from '../../src/stores/s3/s3-store.ts'
import { countingProxy, missing, S3_ACCESS, S3_SECRET, serverBinary, startVersitygw } from './servers.ts'
import { storeSuite, type Harness } from './store-suite.ts'

// The SDK's default chain reads these (the product takes no S3 key of its own); never the instance metadata service.
Object.assign(process.env, { AWS_ACCESS_KEY_ID: S3_ACCESS, AWS_SECRET_ACCESS_KEY: S3_SECRET, AWS_EC2_METADATA_DISABLED: 'true', AWS_REGION: 'us-east-1' })
const WRONG_SECRET = 'wrong-secret-never-to-be-seen'

let endpoint = ''
async function harness (): Promise<Harness | string> {
  const absent = missing(serverBinary('versitygw'))
  if (absent !== undefined) return absent
  const server = await startVersitygw({ after })
  const proxy = await countingProxy(server.port)
  after(async () => { await proxy.close(); await server.close() })
  endpoint = `http://127.0.0.1:${server.port}`
  const client = new S3Client({ endpoint, forcePathStyle: true })
  for (const bucket of ['media', 'other']) await client.send(new CreateBucketCommand({ Bucket: bucket }))
  client.destroy()
  const store = await createS3Store({ endpoint, forcePathStyle: true, allowed: [], denied: [] }, 10_000)
  after(() => store.close())
  return {
    scheme: 's3',
    env: { USE_S3: 'true', S3_ENDPOINT: proxy.url, S3_FORCE_PATH_STYLE: 'true', S3_ALLOWED_BUCKETS: 'media' },
    bucket: 'media',
    settings: { on: 'USE_S3', allowed: 'S3_ALLOWED_BUCKETS' },
    notAllowed: 's3://other/photos/still.jpg',
    store,
    proxy,
    secrets: [S3_SECRET],
    denied: {
      env: {},
      secret: WRONG_SECRET,
      // The wrong secret is in the environment only while this app's client first resolves its credentials.
      async around (fn) {
        process.env.AWS_SECRET_ACCESS_KEY = WRONG_SECRET
        try {
          return await fn()
        } finally {
          process.env.AWS_SECRET_ACCESS_KEY = S3_SECRET
        }
      }
    }
  }
}

storeSuite('s3 (versitygw)', await harness())

test('s3: ?versionId= reads that version; a version deleted is 404', async (t) => {
  if (endpoint === '') return t.skip('versitygw is absent')
  const client = new S3Client({ endpoint, forcePathStyle: true })
  t.after(() => client.destroy())
  await client.send(new CreateBucketCommand({ Bucket: 'versioned' }))
  await client.send(new PutBucketVersioningCommand({ Bucket: 'versioned', VersioningConfiguration: { Status: 'Enabled' } }))
  const { media } = await import('../media.ts')
  const first = await client.send(new PutObjectCommand({ Bucket: 'versioned', Key: 'v.png', Body: await media('png') }))
  await client.send(new PutObjectCommand({ Bucket: 'versioned', Key: 'v.png', Body: await media('jpeg') }))
  const app = await build(t, { USE_S3: 'true', S3_ENDPOINT: endpoint, S3_FORCE_PATH_STYLE: 'true' })
  const post = (url: string) => app.inject({ method: 'POST', url: '/api/thumbnail?format=png', headers: { ...AUTH, 'content-type': 'application/json' }, payload: { url } })
  const older = await app.inject({ method: 'POST', url: '/api/info', headers: { ...AUTH, 'content-type': 'application/json' }, payload: { url: `s3://versioned/v.png?versionId=${encodeURIComponent(first.VersionId!)}` } })
  assert.equal(older.statusCode, 200, older.body)
  assert.match(older.body, /"png"/, 'the first version, a PNG')
  const latest = await app.inject({ method: 'POST', url: '/api/info', headers: { ...AUTH, 'content-type': 'application/json' }, payload: { url: 's3://versioned/v.png' } })
  assert.match(latest.body, /"jpeg"/, 'the latest, a JPEG')
  // A version deleted for good is missing, as any object.
  await client.send(new DeleteObjectCommand({ Bucket: 'versioned', Key: 'v.png', VersionId: first.VersionId }))
  const gone = await post(`s3://versioned/v.png?versionId=${encodeURIComponent(first.VersionId!)}`)
  assert.equal(gone.statusCode, 404, gone.body)
})
