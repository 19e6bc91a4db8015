// GET URLs with a result store in a directory (RESULT_STORAGE=file:///dir), two real apps sharing it as two
// replicas would: a hit answers without fetching or a job, with the miss's ETag and headers; its 304; the
// signature and the signing key are not in the key; Accept's choice and cb are; entries expire.
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { tempFolder } from '../temp-folder.ts'
import { jobs, photoOrigin, reads, replica, sign, SIGNING, written } from './store-helpers.ts'
import { sleep } from '../faults/helpers.ts'

const HEADERS = ['content-type', 'etag', 'cache-control', 'vary', 'content-disposition', 'content-length']
const pick = (headers: Record<string, unknown>) => Object.fromEntries(HEADERS.map(name => [name, headers[name]]))

test('a result one replica made answers on another without a fetch or a job: the same bytes, ETag and headers; If-None-Match gets 304', async (t) => {
  const origin = await photoOrigin(t)
  const storage = pathToFileURL(tempFolder('thumbd-results-', t)).href
  const one = await replica(t, origin.base, storage)
  const two = await replica(t, origin.base, storage)
  const url = sign(`/rs:fill:300:200/q:75/fn:cover/plain/${origin.base}/a.jpg@webp`)
  const miss = await one.inject({ url })
  assert.equal(miss.statusCode, 200, miss.body)
  assert.equal(origin.hits.length, 1)
  await written(one, 1)
  const hit = await two.inject({ url })
  assert.equal(hit.statusCode, 200, hit.body)
  assert.equal(origin.hits.length, 1, 'the hit fetched nothing')
  assert.equal(await jobs(two), 0, 'the hit ran no job')
  assert.equal(await reads(two, 'hit'), 1)
  assert.deepEqual(pick(hit.headers), pick(miss.headers))
  assert.equal(hit.headers['content-disposition'], 'inline; filename="cover.webp"')
  assert.ok(hit.rawPayload.equals(miss.rawPayload), 'the same bytes')
  assert.match(String(hit.headers['server-timing']), /^result;desc="file";dur=/)
  const again = await two.inject({ url, headers: { 'if-none-match': String(miss.headers.etag) } })
  assert.equal(again.statusCode, 304)
  assert.equal(again.headers.etag, miss.headers.etag)
  assert.equal(again.rawPayload.length, 0)
  assert.equal(origin.hits.length, 1)
  assert.equal(await jobs(two), 0)
})

test('a URL signed with a rotated key hits the entry; cb and the format Accept chose each make their own', async (t) => {
  const origin = await photoOrigin(t)
  const storage = pathToFileURL(tempFolder('thumbd-results-', t)).href
  const before = await replica(t, origin.base, storage)
  const newKey = Buffer.alloc(32, 7)
  const newSalt = Buffer.alloc(32, 9)
  // After rotation: the new pair first, the old one still accepted.
  const after = await replica(t, origin.base, storage, { URL_SIGNING_KEYS: `${newKey.toString('hex')},${SIGNING.URL_SIGNING_KEYS}`, URL_SIGNING_SALTS: `${newSalt.toString('hex')},${SIGNING.URL_SIGNING_SALTS}` })
  const path = `/rs:fit:200:0/f:auto/plain/${origin.base}/b.jpg`
  const webp = { accept: 'image/webp,*/*' }
  assert.equal((await before.inject({ url: sign(path), headers: webp })).statusCode, 200)
  await written(before, 1)
  const rotated = await after.inject({ url: sign(path, newKey, newSalt), headers: webp })
  assert.equal(rotated.statusCode, 200)
  assert.equal(rotated.headers['content-type'], 'image/webp')
  assert.equal(rotated.headers.vary, 'Accept')
  assert.equal(origin.hits.length, 1, 'another signature, the same entry')
  const avif = await after.inject({ url: sign(path, newKey, newSalt), headers: { accept: 'image/avif,image/webp' } })
  assert.equal(avif.headers['content-type'], 'image/avif')
  assert.equal(origin.hits.length, 2, 'Accept chose another format: another entry')
  const busted = await after.inject({ url: sign(`/cb:2${path}`, newKey, newSalt), headers: webp })
  assert.equal(busted.statusCode, 200)
  assert.equal(origin.hits.length, 3, 'cb: another entry')
  assert.equal(await jobs(after), 2)
})

test('an entry older than RESULT_STORAGE_SECONDS is not served: the source is fetched again and the entry replaced', async (t) => {
  const origin = await photoOrigin(t)
  const folder = tempFolder('thumbd-results-', t)
  const app = await replica(t, origin.base, pathToFileURL(folder).href, { RESULT_STORAGE_SECONDS: '1' })
  const url = sign(`/w:120/plain/${origin.base}/c.jpg@png`)
  await app.inject({ url })
  await written(app, 1)
  await app.inject({ url })
  assert.equal(origin.hits.length, 1, 'fresh: a hit')
  await sleep(1100)
  const late = await app.inject({ url })
  assert.equal(late.statusCode, 200)
  assert.equal(origin.hits.length, 2, 'expired: fetched again')
  assert.equal(await reads(app, 'miss'), 2)
  await written(app, 2)
  assert.equal(readdirSync(folder, { recursive: true }).filter(name => /[0-9a-f]{64}$/.test(String(name))).length, 1, 'one entry, replaced')
})
