// The directory result store (src/result-store/directory-store.ts) on the real filesystem: whole entries or
// none, hash-prefixed folders, the byte bound kept by removing the oldest entries, what an earlier run left
// counted into the bound at start (its dead temp files removed).
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { DirectoryStore } from '../../src/result-store/directory-store.ts'
import { entryPath } from '../../src/result-store/key.ts'
import { tempFolder } from '../temp-folder.ts'

const MiB = 1024 * 1024
const at = (key: string) => ({ scheme: 'local' as const, bucket: '', key: entryPath(key) })
const keyOf = (n: number) => n.toString(16).padStart(64, 'a')
const files = (root: string) => readdirSync(root, { recursive: true }).map(String).filter(name => /[0-9a-f]{64}/.test(name))

test('writes go whole into folders by hash prefix; reads give them back; no temp file is left', async (t) => {
  const root = tempFolder('thumbd-dir-store-', t)
  const store = new DirectoryStore({ root, maxBytes: MiB })
  await store.write(at(keyOf(1)), Buffer.from('hello'), { contentType: 'application/octet-stream' })
  const answer = await store.read(at(keyOf(1)))
  assert.equal(answer.statusCode, 200)
  assert.equal(Buffer.concat(await answer.body.toArray()).toString(), 'hello')
  assert.deepEqual(files(root), [join('aa', 'aa', keyOf(1))])
  assert.equal((await store.stat(at(keyOf(1))))?.size, 5)
  assert.equal(await store.stat(at(keyOf(2))), undefined)
  await assert.rejects(store.read(at(keyOf(2))), { code: 'ENOENT' })
  await store.close()
})

test('past its bound the oldest entries go first, and the bound holds', async (t) => {
  const root = tempFolder('thumbd-dir-store-', t)
  let evicted = 0
  const store = new DirectoryStore({ root, maxBytes: MiB, onEvict: count => { evicted += count } })
  await store.scanned
  const body = Buffer.alloc(300 * 1024, 7)
  for (let n = 1; n <= 5; n++) await store.write(at(keyOf(n)), body, { contentType: 'application/octet-stream' })
  // 5 x 300 KiB into 1 MiB: the 3 newest stay.
  assert.deepEqual(files(root).map(name => name.slice(-1)).sort(), ['3', '4', '5'])
  assert.equal(evicted, 2)
  assert.ok(store.bytes <= MiB, String(store.bytes))
  // Rewriting an entry makes it the newest: the next write pushes out 4, not 3.
  await store.write(at(keyOf(3)), body, { contentType: 'application/octet-stream' })
  await store.write(at(keyOf(6)), body, { contentType: 'application/octet-stream' })
  assert.deepEqual(files(root).map(name => name.slice(-1)).sort(), ['3', '5', '6'])
})

test('at start, what an earlier run left counts into the bound, oldest first; its dead temp files go', async (t) => {
  const root = tempFolder('thumbd-dir-store-', t)
  const body = Buffer.alloc(400 * 1024, 1)
  const now = Date.now() / 1000
  for (let n = 1; n <= 3; n++) {
    const path = join(root, entryPath(keyOf(n)))
    mkdirSync(join(path, '..'), { recursive: true })
    writeFileSync(path, body)
    // Written long ago, 3 first, 1 last.
    utimesSync(path, now - 1000 * n, now - 1000 * n)
  }
  const dead = join(root, `${entryPath(keyOf(1))}.0123.tmp`)
  writeFileSync(dead, 'half')
  utimesSync(dead, now - 3600, now - 3600)
  const store = new DirectoryStore({ root, maxBytes: MiB })
  await store.scanned
  assert.equal(existsSync(dead), false, 'a dead temp file is removed')
  assert.deepEqual(files(root).map(name => name.slice(-1)).sort(), ['1', '2'], 'the oldest (3) went to keep 1.2 MiB within 1 MiB')
  await store.write(at(keyOf(9)), body, { contentType: 'application/octet-stream' })
  assert.deepEqual(files(root).map(name => name.slice(-1)).sort(), ['1', '9'])
})
