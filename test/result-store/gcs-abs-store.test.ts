// Result stores in a GCS bucket (fake-gcs-server) and an Azure container (Azurite), the real servers the store
// tests start, through the gs and abs stores of src/stores/: what one replica keeps, another serves without a
// fetch or a job, with the same ETag and bytes. Sources of those schemes stay off (no USE_GCS, no USE_ABS).
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { after, test, type TestContext } from 'node:test'
import { Storage } from '@google-cloud/storage'
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob'
import { AZURITE_ACCOUNT, AZURITE_BIN, AZURITE_KEY, missing, serverBinary, startAzurite, startFakeGcs } from '../stores/servers.ts'
import { jobs, photoOrigin, reads, replica, sign, written } from './store-helpers.ts'

async function sharedByReplicas (t: TestContext, storage: string, env: Record<string, string>, name: string) {
  const origin = await photoOrigin(t)
  const one = await replica(t, origin.base, storage, env)
  const two = await replica(t, origin.base, storage, env)
  const url = sign(`/rs:fit:160:0/att:1/plain/${origin.base}/a.jpg@webp`)
  const miss = await one.inject({ url })
  assert.equal(miss.statusCode, 200, miss.body)
  await written(one, 1)
  const hit = await two.inject({ url })
  assert.equal(hit.statusCode, 200, hit.body)
  assert.equal(origin.hits.length, 1, 'no fetch')
  assert.equal(await jobs(two), 0, 'no job')
  assert.equal(await reads(two, 'hit'), 1)
  for (const header of ['etag', 'content-type', 'content-disposition', 'cache-control']) assert.equal(hit.headers[header], miss.headers[header], header)
  assert.ok(hit.rawPayload.equals(miss.rawPayload))
  assert.match(String(hit.headers['server-timing']), new RegExp(`^result;desc="${name}"`))
}

const gcsAbsent = missing(serverBinary('fake-gcs-server'))
test('gs: a result kept by one replica in a GCS bucket prefix is served by another', { skip: gcsAbsent }, async (t) => {
  const server = await startFakeGcs()
  t.after(() => server.close())
  const endpoint = `http://127.0.0.1:${server.port}`
  await new Storage({ apiEndpoint: endpoint, projectId: 'thumbd-test' }).createBucket('results')
  await sharedByReplicas(t, 'gs://results/thumbs', { GCS_ENDPOINT: endpoint }, 'gs')
})

const azuriteAbsent = existsSync(AZURITE_BIN) ? undefined : 'azurite is missing (npm ci installs it)'
test('abs: a result kept by one replica in an Azure container prefix is served by another', { skip: azuriteAbsent }, async (t) => {
  const server = await startAzurite({ after })
  t.after(() => server.close())
  const endpoint = `http://127.0.0.1:${server.port}/${AZURITE_ACCOUNT}`
  await new BlobServiceClient(endpoint, new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY)).createContainer('results')
  await sharedByReplicas(t, 'abs://results/thumbs', { ABS_NAME: AZURITE_ACCOUNT, ABS_KEY: AZURITE_KEY, ABS_ENDPOINT: endpoint }, 'abs')
})
