// The directory store on its own (src/stores/local/): reads shaped as HTTP answers, whole-or-nothing writes, and
// every way out of LOCAL_FILESYSTEM_ROOT refused without naming the path. The same store through the app is in
// store-suite.ts, with the other stores.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { text } from 'node:stream/consumers'
import { test } from 'node:test'
import { createLocalStore } from '../../src/stores/local/local-store.ts'
import type { ObjectStore } from '../../src/stores/store.ts'
import { tempFolder } from '../temp-folder.ts'

const at = (key: string) => ({ scheme: 'local' as const, bucket: '', key })

function setUp (t: { after (fn: () => void): void }): { root: string, outside: string, store: ObjectStore } {
  const root = tempFolder('thumbd-local-root-', t)
  const outside = tempFolder('thumbd-local-outside-', t)
  writeFileSync(join(outside, 'secret.txt'), 'outside the root')
  writeFileSync(join(root, 'a.txt'), '0123456789')
  return { root, outside, store: createLocalStore({ root }) }
}

async function refusal (promise: Promise<unknown>): Promise<{ statusCode: number, code: string, message: string }> {
  const err = await promise.then(() => assert.fail('expected a refusal'), (e: { statusCode: number, code: string, message: string }) => e)
  return err
}

test('reads whole and by range, with the headers an HTTP origin sends', async (t) => {
  const { store } = setUp(t)
  const whole = await store.read(at('a.txt'))
  assert.equal(whole.statusCode, 200)
  assert.equal(whole.headers['content-length'], '10')
  assert.match(String(whole.headers.etag), /^"[0-9a-z-]+"$/)
  assert.equal(await text(whole.body), '0123456789')
  const part = await store.read(at('a.txt'), { range: 'bytes=2-5' })
  assert.equal(part.statusCode, 206)
  assert.equal(part.headers['content-range'], 'bytes 2-5/10')
  assert.equal(await text(part.body), '2345')
  const open = await store.read(at('a.txt'), { range: 'bytes=7-', ifRange: whole.headers.etag as string })
  assert.equal(await text(open.body), '789')
  const changed = await refusal(store.read(at('a.txt'), { range: 'bytes=7-', ifRange: '"other"' }))
  assert.equal(changed.code, 'THUMBD_SOURCE_FETCH_FAILED')
})

test('writes whole or not at all, keeps metadata, stats and removes', async (t) => {
  const { root, store } = setUp(t)
  const written = await store.write(at('deep/er/b.bin'), Buffer.from('hello'), { contentType: 'image/png', metadata: { job: '42' } })
  assert.equal(written.size, 5)
  const stat = await store.stat(at('deep/er/b.bin'))
  assert.equal(stat?.etag, written.etag)
  assert.deepEqual(stat?.metadata, { job: '42' })
  const typed = await store.read(at('deep/er/b.bin'))
  typed.body.destroy()
  assert.equal(typed.headers['content-type'], 'image/png')
  // A stream that fails halfway leaves the old object, and no temp file.
  const failing = new Readable({ read () { this.push(Buffer.from('part')); this.destroy(new Error('cut')) } })
  await assert.rejects(store.write(at('deep/er/b.bin'), failing, { contentType: 'image/png' }))
  assert.equal(await text((await store.read(at('deep/er/b.bin'))).body), 'hello')
  assert.deepEqual(readdirSync(join(root, 'deep/er')).sort(), ['.b.bin.meta.json', 'b.bin'])
  await store.remove(at('deep/er/b.bin'))
  assert.equal(await store.stat(at('deep/er/b.bin')), undefined)
  await store.remove(at('deep/er/b.bin')) // again: nothing to do
  assert.equal((await refusal(store.read(at('deep/er/b.bin')))).code, 'THUMBD_SOURCE_NOT_FOUND')
})

test('every way out of the root is SOURCE_FORBIDDEN naming the setting, never the path', async (t) => {
  const { root, outside, store } = setUp(t)
  symlinkSync(join(outside, 'secret.txt'), join(root, 'link-out'))
  symlinkSync(outside, join(root, 'dir-out'))
  symlinkSync('/proc/self/environ', join(root, 'proc-env'))
  symlinkSync('/dev/zero', join(root, 'zero'))
  execFileSync('mkfifo', [join(root, 'fifo')])
  mkdirSync(join(root, 'dir'))
  symlinkSync(join(root, 'a.txt'), join(root, 'link-in'))
  const cases = ['../' + outside.split('/').pop() + '/secret.txt', 'link-out', 'dir-out/secret.txt', 'proc-env', 'zero', 'fifo', 'dir']
  for (const key of cases) {
    const err = await refusal(store.read(at(key)))
    assert.equal(err.code, 'THUMBD_SOURCE_FORBIDDEN', `${key}: ${err.message}`)
    assert.match(err.message, /LOCAL_FILESYSTEM_ROOT/, key)
    assert.ok(!err.message.includes(outside) && !err.message.includes(root), `${key}: no path in "${err.message}"`)
  }
  // A symlink that stays inside the root is followed.
  assert.equal(await text((await store.read(at('link-in'))).body), '0123456789')
  // /proc is refused even under a root of "/".
  const everything = createLocalStore({ root: '/' })
  assert.equal((await refusal(everything.read(at('proc/self/status')))).code, 'THUMBD_SOURCE_FORBIDDEN')
  // Writes never go through a symlinked directory out of the root.
  assert.equal((await refusal(store.write(at('dir-out/new.txt'), Buffer.from('x'), { contentType: 'text/plain' }))).code, 'THUMBD_SOURCE_FORBIDDEN')
  assert.deepEqual(readdirSync(outside), ['secret.txt'])
})

test('a missing file through a symlink out is refused as leaving the root, as an existing one is: no 404/400 oracle on paths outside', async (t) => {
  const { root, outside, store } = setUp(t)
  mkdirSync(join(root, 'sub'))
  symlinkSync(outside, join(root, 'dirlink'))
  symlinkSync(join(outside, 'nonexistent'), join(root, 'link-missing'))
  symlinkSync(join(outside, 'no-dir', 'x'), join(root, 'link-missing-dir'))
  for (const key of ['dirlink/secret.txt', 'dirlink/nonexistent', 'dirlink/no/such/file', 'link-missing', 'link-missing-dir', 'link-missing/x']) {
    const err = await refusal(store.read(at(key)))
    assert.equal(err.code, 'THUMBD_SOURCE_FORBIDDEN', `${key}: ${err.message}`)
    assert.match(err.message, /leaves LOCAL_FILESYSTEM_ROOT/)
    assert.ok(!err.message.includes(outside), 'no path outside')
  }
  // Missing inside the root is still 404.
  for (const key of ['nonexistent', 'sub/nonexistent', 'a.txt/x']) assert.equal((await refusal(store.read(at(key)))).code, 'THUMBD_SOURCE_NOT_FOUND', key)
})
