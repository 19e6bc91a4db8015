// local:// through the shared suite, on a directory of this test's own as LOCAL_FILESYSTEM_ROOT, with a symlink
// that leads out of it as the path not allowed.
import { chmodSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after } from 'node:test'
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
