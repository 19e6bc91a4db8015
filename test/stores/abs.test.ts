// abs:// against Azurite (Microsoft's Azure Storage emulator, an npm devDependency), started once for this
// file, through the shared suite. Azurite checks shared-key signatures: a wrong ABS_KEY is refused as Azure would.
import { existsSync } from 'node:fs'
import { after } from 'node:test'
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob'
import { createAbsStore } from '../../src/stores/abs/abs-store.ts'
import { AZURITE_ACCOUNT, AZURITE_BIN, AZURITE_KEY, countingProxy, startAzurite } from './servers.ts'
import { storeSuite, type Harness } from './store-suite.ts'

/** Another key of the right form (64 bytes, base64), which Azurite's signature check refuses. */
const WRONG_KEY = Buffer.alloc(64, 7).toString('base64')

async function harness (): Promise<Harness | string> {
  if (!existsSync(AZURITE_BIN)) {
    if (process.env.CI) throw new Error('azurite is missing: run npm ci')
    return 'azurite is missing (npm ci installs it); skipped outside CI'
  }
  const server = await startAzurite({ after })
  const proxy = await countingProxy(server.port)
  after(async () => { await proxy.close(); await server.close() })
  const endpoint = `http://127.0.0.1:${server.port}/${AZURITE_ACCOUNT}`
  const service = new BlobServiceClient(endpoint, new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY))
  for (const container of ['media', 'other']) await service.createContainer(container)
  const env = { USE_ABS: 'true', ABS_NAME: AZURITE_ACCOUNT, ABS_KEY: AZURITE_KEY, ABS_ENDPOINT: `${proxy.url}/${AZURITE_ACCOUNT}`, ABS_ALLOWED_CONTAINERS: 'media' }
  return {
    scheme: 'abs',
    env,
    bucket: 'media',
    settings: { on: 'USE_ABS', allowed: 'ABS_ALLOWED_CONTAINERS' },
    notAllowed: 'abs://other/photos/still.jpg',
    store: await createAbsStore({ name: AZURITE_ACCOUNT, key: AZURITE_KEY, endpoint, allowed: [], denied: [] }, 10_000),
    proxy,
    secrets: [AZURITE_KEY],
    denied: { env: { ABS_KEY: WRONG_KEY }, secret: WRONG_KEY }
  }
}

storeSuite('abs (Azurite)', await harness())
