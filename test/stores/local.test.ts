// local:// through the shared suite, on a directory of this test's own as LOCAL_FILESYSTEM_ROOT, with a symlink
// that leads out of it as the path not allowed; then that an HTTP redirect cannot lead into a store.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { chmodSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { AUTH, build } from '../helper.ts'
import { media } from '../media.ts'
import { createLocalStore } from '../../src/stores/local/local-store.ts'
import { tempFolder } from '../temp-folder.ts'
import { storeSuite } from './store-suite.ts'

const root = tempFolder('thumbd-local-suite-', { after })
const outside = tempFolder('thumbd-local-outside-', { after })
writeFileSync(join(outside, 'still.jpg'), 'not to be read')
symlinkSync(outside, join(root, 'out'))

storeSuite('local', {
  scheme: 'local',
  env: { LOCAL_FILESYSTEM_ROOT: root },
  bucket: '',
  settings: { on: 'LOCAL_FILESYSTEM_ROOT', allowed: 'LOCAL_FILESYSTEM_ROOT' },
  notAllowed: 'local:///out/still.jpg',
  store: createLocalStore({ root }),
  // root reads whatever the modes say: the refusal can only be seen as another user.
  denied: process.getuid?.() === 0
    ? { untestable: 'the tests run as root, whom file modes do not refuse' }
    : {
        env: {},
        secret: outside,
        async around (fn) {
          chmodSync(join(root, 'private/still.jpg'), 0)
          try {
            return await fn()
          } finally {
            chmodSync(join(root, 'private/still.jpg'), 0o644)
          }
        }
      }
})

test('an HTTP origin cannot redirect into a store: Location: local:///… or s3://… is refused like any non-http URL', async (t) => {
  writeFileSync(join(root, 'target.jpg'), await media('jpeg'))
  const origin = createServer((request, response) => response.writeHead(302, { location: request.url === '/s3' ? 's3://media/target.jpg' : 'local:///target.jpg' }).end())
  origin.listen(0, '127.0.0.1')
  await once(origin, 'listening')
  t.after(() => origin.close())
  const base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`
  const app = await build(t, { LOCAL_FILESYSTEM_ROOT: root, USE_S3: 'true', ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${base}/` })
  assert.equal((await fromStore(app, 'local:///target.jpg')).statusCode, 200, 'the file itself is readable')
  for (const path of ['/local', '/s3']) {
    const res = await fromStore(app, `${base}${path}`)
    assert.equal(res.statusCode, 400, res.body)
    assert.match(res.body, /THUMBD_SOURCE_FORBIDDEN.*only http and https/)
  }
})

function fromStore (app: FastifyInstance, url: string) {
  return app.inject({ method: 'POST', url: '/api/thumbnail', headers: { ...AUTH, 'content-type': 'application/json' }, payload: { url } })
}
