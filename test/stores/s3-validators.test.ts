// Later ranges of an object whose store gives no strong ETag (Last-Modified only): an S3-compatible server of
// that kind, on loopback, which also ignores If-Unmodified-Since (versitygw always gives an ETag and honours
// the conditions, so it cannot show this). The object changes after the first range: the later range must be
// refused as "changed", not mixed into the first one's bytes.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { text } from 'node:stream/consumers'
import { after, test } from 'node:test'
import { loadConfig } from '../../src/config.ts'
import { createOrigins } from '../../src/sources/origins.ts'
import { createStores } from '../../src/stores/registry.ts'

Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'validators-test', AWS_SECRET_ACCESS_KEY: 'validators-test-secret', AWS_EC2_METADATA_DISABLED: 'true' })

const OBJECT = Buffer.alloc(1000, 'a')
let version = 0
const seen: IncomingHttpHeaders[] = []
// GetObject, path style: 206 for a range, Last-Modified of the current version, no ETag; conditions ignored.
const server = createServer((request, response) => {
  seen.push(request.headers)
  if (request.url!.includes('/cut.bin')) { // a body cut after its first bytes
    response.writeHead(200, { 'content-length': OBJECT.length, 'last-modified': new Date().toUTCString() })
    response.write(OBJECT.subarray(0, 100))
    setTimeout(() => response.destroy(), 50)
    return
  }
  const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '')
  const start = Number(range?.[1] ?? 0)
  const end = range?.[2] ? Number(range[2]) : OBJECT.length - 1
  response.writeHead(range === null ? 200 : 206, {
    'content-length': end - start + 1,
    ...(range === null ? {} : { 'content-range': `bytes ${start}-${end}/${OBJECT.length}` }),
    'last-modified': new Date(Date.UTC(2026, 10, 28, 10, 0, version)).toUTCString(),
    'content-type': 'application/octet-stream'
  })
  response.end(OBJECT.subarray(start, end + 1))
})
server.listen(0, '127.0.0.1')
await once(server, 'listening')
after(() => server.close())

const stores = createStores(loadConfig({ USE_S3: 'true', S3_ENDPOINT: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, S3_REGION: 'us-east-1' }).stores)
after(() => stores.close())
const origins = createOrigins(() => { throw new Error('no http source here') }, stores, 2 ** 20)

test('s3: a later range of an object without an ETag is pinned by its Last-Modified; a changed object is refused', async () => {
  const signal = AbortSignal.timeout(10_000)
  const first = await origins.fetch('s3://media/plain.bin', signal, { range: 'bytes=0-' })
  await text(first.body)
  const validator = first.headers['last-modified']
  assert.equal(first.headers.etag, undefined)
  assert.equal(typeof validator, 'string')
  // Unchanged: read, and asked with the date as a condition.
  const same = await origins.fetch('s3://media/plain.bin', signal, { range: 'bytes=100-199', ifRange: validator })
  assert.equal((await text(same.body)).length, 100)
  assert.equal(new Date(seen.at(-1)!['if-unmodified-since']!).getTime(), new Date(validator!).getTime(), 'If-Unmodified-Since sent')
  // Replaced meanwhile (a newer Last-Modified), by a server that does not honour the condition.
  version++
  await assert.rejects(origins.fetch('s3://media/plain.bin', signal, { range: 'bytes=200-299', ifRange: validator }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'THUMBD_SOURCE_FETCH_FAILED', err.message)
    assert.match(err.message, /s3:\/\/media.* changed while it was read/)
    return true
  })
})

test('s3: a body cut mid-read fails with a 502 that names the store', async () => {
  const answer = await origins.fetch('s3://media/cut.bin', AbortSignal.timeout(10_000))
  await assert.rejects(text(answer.body), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'THUMBD_SOURCE_FETCH_FAILED', err.message)
    assert.match(err.message, /s3:\/\/media could not be reached/)
    return true
  })
})
