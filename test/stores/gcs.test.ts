// gs:// against fake-gcs-server, started once for this file, through the shared suite.
import { after } from 'node:test'
import { Storage } from '@google-cloud/storage'
import { createGcsStore } from '../../src/stores/gcs/gcs-store.ts'
import { countingProxy, missing, serverBinary, startFakeGcs } from './servers.ts'
import { storeSuite, type Harness } from './store-suite.ts'

async function harness (): Promise<Harness | string> {
  const absent = missing(serverBinary('fake-gcs-server'))
  if (absent !== undefined) return absent
  const server = await startFakeGcs()
  const proxy = await countingProxy(server.port)
  after(async () => { await proxy.close(); await server.close() })
  const endpoint = `http://127.0.0.1:${server.port}`
  const storage = new Storage({ apiEndpoint: endpoint, projectId: 'thumbd-test' })
  for (const bucket of ['media', 'other']) await storage.createBucket(bucket)
  return {
    scheme: 'gs',
    env: { USE_GCS: 'true', GCS_ENDPOINT: proxy.url, GCS_ALLOWED_BUCKETS: 'media' },
    bucket: 'media',
    settings: { on: 'USE_GCS', allowed: 'GCS_ALLOWED_BUCKETS' },
    notAllowed: 'gs://other/photos/still.jpg',
    store: createGcsStore({ endpoint, allowed: [], denied: [] }, 10_000),
    proxy,
    // Its one credential path, a service account key, exchanges a token at Google's address: never reached from a test.
    denied: { untestable: 'fake-gcs-server authorizes every request (no credentials, no bucket policy), and a GCS_KEY would send the client to oauth2.googleapis.com, off loopback' }
  }
}

storeSuite('gs (fake-gcs-server)', await harness())
